"""A data object is only ever created, never replaced: ``If-None-Match: *`` on the request that makes it
visible, and what a key found taken means (this object's own earlier write, another writer's identical
object, or another object: an error, having replaced nothing). A stub boto3 client with S3's conditional
writes stands in for S3; integration/test_conditional_objects.py runs the same paths on moto and SeaweedFS."""

from __future__ import annotations

import pytest
from botocore.exceptions import ConnectionClosedError

from kafka_s3_assets.clients.errors import ObjectExistsError, S3Error
from kafka_s3_assets.clients.s3 import MultipartOutput
from kafka_s3_assets.clients.s3_retry import Retrier, RetryPolicy

from .s3_stub import StubClient, client_error, md5_etag, multipart_etag

pytestmark = [pytest.mark.unit]

PART = 4
SMALL = b"abc"  # below one part: one PutObject
BIG = b"123456789"  # parts of 4, 4 and 1 bytes: a multipart upload
WRITES = {"put_object", "create_multipart_upload", "upload_part", "complete_multipart_upload"}


def output(client: StubClient, key: str = "k", before_write=None) -> MultipartOutput:
    return MultipartOutput(
        client,
        "b",
        key,
        part_size=PART,
        before_write=before_write,
        retrier=Retrier(RetryPolicy(3, 1), sleep=lambda s: None),
    )


def write(client: StubClient, body: bytes, key: str = "k", before_write=None):
    out = output(client, key, before_write)
    out.write(body)
    return out.commit()


def conditions(client: StubClient) -> dict[str, set]:
    """The If-None-Match each kind of request that makes an object visible was sent with."""
    found: dict[str, set] = {}
    for name, kw in zip(client.calls, client.kwargs):
        if name in ("put_object", "complete_multipart_upload"):
            found.setdefault(name, set()).add(kw.get("IfNoneMatch"))
    return found


def test_every_object_and_its_sibling_is_created_only_if_its_key_is_free():
    client = StubClient()
    write(client, SMALL, "small")
    big = output(client, "big")
    big.write(BIG)
    big.commit()
    index = big.create_sibling("big.index.json")  # e.g. the Block-GZIP index
    index.write(b"{}")
    index.commit()
    assert conditions(client) == {"put_object": {"*"}, "complete_multipart_upload": {"*"}}
    assert client.objects == {"small": SMALL, "big": BIG, "big.index.json": b"{}"}


@pytest.mark.parametrize("body", [SMALL, BIG], ids=["put", "multipart"])
def test_a_key_holding_these_very_bytes_is_kept_as_this_object(body):
    """Another export wrote the same object from the same plan (a take-over replaying a zombie's)."""
    client = StubClient()
    # Written as this output writes it: one PutObject, or parts of the same size.
    client.put("k", body, md5_etag(body) if body == SMALL else multipart_etag([b"1234", b"5678", b"9"]))
    etag = client.etags["k"]
    stored = write(client, body)
    assert stored.size == len(body)
    assert client.objects["k"] == body and client.etags["k"] == etag
    assert "get_object" not in client.calls  # the ETag said it: no download
    assert client.uploads == {}  # the upload the failed condition left open is aborted


@pytest.mark.parametrize("body", [SMALL, BIG], ids=["put", "multipart"])
@pytest.mark.parametrize("same_size", [True, False], ids=["same-size", "other-size"])
def test_a_key_holding_other_bytes_stops_the_object_and_replaces_nothing(body, same_size):
    client = StubClient()
    theirs = bytes(reversed(body)) if same_size else body + b"more"
    client.put("k", theirs)
    out = output(client)
    out.write(body)
    with pytest.raises(
        ObjectExistsError,
        match=r"^s3://b/k already exists with other bytes \(stored: "
        r".* an object is never replaced, so this one was not written$",
    ):
        out.commit()
    assert client.objects == {"k": theirs} and client.uploads == {}
    assert ("get_object" in client.calls) is same_size  # only an equal size needs the bytes compared
    with pytest.raises(S3Error, match="aborted after an earlier failure"):
        out.commit()


@pytest.mark.parametrize("same", [True, False])
def test_where_etags_differ_the_bytes_decide(same):
    """SSE-KMS and SSE-C objects have ETags that are not the MD5 of their bytes (and the same bytes written
    in other parts have another multipart ETag)."""
    client = StubClient()
    client.put("k", BIG if same else b"987654321", etag='"not-an-md5-of-the-bytes"')
    if same:
        assert write(client, BIG).size == len(BIG)
    else:
        with pytest.raises(ObjectExistsError):
            write(client, BIG)
    assert client.calls.count("get_object") == 1


def test_a_put_whose_answer_was_lost_meets_its_own_object_on_the_retry():
    client = StubClient(put_object=[ConnectionClosedError(endpoint_url="http://s3")])
    write(client, SMALL)
    assert client.calls == ["put_object", "put_object", "head_object"]
    assert client.objects == {"k": SMALL}


def test_a_completion_whose_answer_was_lost_meets_its_own_object_as_a_failed_condition():
    """SeaweedFS answers a repeated CompleteMultipartUpload with 412 (moto with 200, others with 404)."""
    client = StubClient(
        complete_multipart_upload=[
            ConnectionClosedError(endpoint_url="http://s3"),
            client_error(412, "PreconditionFailed"),
        ]
    )
    write(client, BIG)
    assert client.calls.count("complete_multipart_upload") == 2 and "get_object" not in client.calls
    assert client.objects == {"k": BIG} and client.uploads == {}


def test_a_failed_condition_embedded_in_a_200_answer_is_not_retried():
    """botocore turns an error embedded in a 200 answer to CompleteMultipartUpload into a 500."""
    client = StubClient(complete_multipart_upload=[client_error(500, "PreconditionFailed")])
    client.put("k", b"theirs")
    with pytest.raises(ObjectExistsError):
        write(client, BIG)
    assert client.calls.count("complete_multipart_upload") == 1 and client.uploads == {}


def test_a_concurrent_conditional_write_that_did_not_land_is_a_failure_naming_it():
    client = StubClient(put_object=[client_error(409, "ConditionalRequestConflict", "try again")])
    with pytest.raises(
        S3Error,
        match=r"^PutObject \(If-None-Match: \*\) of s3://b/k failed: HTTP 409 "
        r"ConditionalRequestConflict: try again$",
    ):
        write(client, SMALL)
    assert client.objects == {}


def test_a_concurrent_conditional_write_of_the_same_bytes_is_this_object():
    client = StubClient(put_object=[client_error(409, "ConditionalRequestConflict")])
    client.put("k", SMALL)
    write(client, SMALL)
    assert client.objects == {"k": SMALL}


def test_before_write_is_checked_before_every_writing_request():
    client = StubClient()
    checked: list[int] = []
    write(client, BIG, before_write=lambda: checked.append(len(client.calls)))
    writes = [i for i, name in enumerate(client.calls) if name in WRITES]
    # Each writing request comes right after a check (a new upload's creation goes with its first part).
    assert checked == [0, 2, 3, 4] and writes == [0, 1, 2, 3, 4]
    assert client.calls[4] == "complete_multipart_upload"


class TakenOver(Exception):
    pass


def failing_from(nth: int):
    """A check that fails from its ``nth`` call on."""
    calls = []

    def check():
        calls.append(1)
        if len(calls) >= nth:
            raise TakenOver("lease taken over")

    return check


def test_an_object_whose_check_fails_is_aborted_and_never_made_visible():
    client = StubClient()
    with pytest.raises(TakenOver):
        write(client, BIG, before_write=failing_from(3))  # the third check comes before the last part
    assert "complete_multipart_upload" not in client.calls
    assert client.objects == {} and client.uploads == {}
    with pytest.raises(TakenOver):
        write(client, SMALL, key="small", before_write=failing_from(1))
    assert "put_object" not in client.calls
