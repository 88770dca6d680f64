"""The S3 retry policy (``s3.part.retries``, ``s3.retry.backoff.ms``) and how the S3 client applies it,
without a server: fake random, fake sleep, and a stub boto3 client where a request must fail in a
particular way."""

from __future__ import annotations

import random

import pytest
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    IncompleteReadError,
    NoCredentialsError,
    ParamValidationError,
    ReadTimeoutError,
    ResponseStreamingError,
)

from kafka_s3_assets.clients.errors import ManifestConflictError, ObjectExistsError, S3Error
from kafka_s3_assets.clients.s3 import MultipartOutput, S3ObjectStore, S3Settings
from kafka_s3_assets.clients.s3_retry import (
    MAX_BACKOFF_MS,
    Retrier,
    RetryPolicy,
    S3RetriesExhaustedError,
    describe,
    is_retryable,
)
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.sink.config_keys import ALL_KEYS, Support

from ..conftest import connector_config
from .s3_stub import StubClient, client_error

pytestmark = [pytest.mark.unit]

DAY_MS = 24 * 60 * 60 * 1000


class HighestRandom(random.Random):
    """Always the largest value ``randrange`` may return, and a log of the bounds asked for."""

    def __init__(self):
        super().__init__(0)
        self.bounds: list[int] = []

    def randrange(self, stop, *args):
        self.bounds.append(stop)
        return stop - 1


# ---- the policy ------------------------------------------------------------------------------------


@pytest.mark.parametrize("configured, attempts", [(0, 1), (1, 1), (2, 2), (3, 3), (10, 10)])
def test_s3_part_retries_counts_total_attempts_and_zero_means_one(configured, attempts):
    assert RetryPolicy(total_attempts=configured).attempts == attempts


def test_the_delay_bound_doubles_from_the_base_starting_with_the_second_attempt():
    policy = RetryPolicy(base_backoff_ms=200)
    assert [policy.backoff_cap_ms(n) for n in range(1, 7)] == [0, 200, 400, 800, 1600, 3200]


def test_the_delay_bound_is_capped_at_24_hours():
    policy = RetryPolicy(base_backoff_ms=200)
    assert MAX_BACKOFF_MS == DAY_MS
    assert policy.backoff_cap_ms(20) == 200 * 2**18 < DAY_MS  # 52 428 800 ms: the last uncapped attempt
    assert policy.backoff_cap_ms(21) == DAY_MS  # 200 * 2**19 would be 104 857 600 ms
    assert policy.backoff_cap_ms(10_000) == DAY_MS


def test_the_exponent_stops_at_attempt_30_as_in_the_sdk():
    policy = RetryPolicy(base_backoff_ms=1, max_backoff_ms=2**31 - 1)  # a cap the exponent does not reach
    assert policy.backoff_cap_ms(30) == policy.backoff_cap_ms(31) == policy.backoff_cap_ms(500) == 2**28


def test_base_and_cap_are_clamped_to_a_java_int_as_in_the_sdk():
    assert RetryPolicy(base_backoff_ms=2**40, max_backoff_ms=2**40).backoff_cap_ms(2) == 2**31 - 1


def test_delays_are_uniform_below_the_bound_full_jitter():
    policy = RetryPolicy(base_backoff_ms=100)
    rng = random.Random(42)
    for attempt, bound in [(2, 100), (3, 200), (4, 400)]:
        delays = [policy.delay_ms(attempt, rng) for _ in range(2000)]
        assert all(isinstance(d, int) and 0 <= d < bound for d in delays)
        assert min(delays) < bound * 0.05 and max(delays) > bound * 0.95  # spread over the whole range
        assert abs(sum(delays) / len(delays) - (bound - 1) / 2) < bound * 0.05


def test_the_first_attempt_never_waits_and_a_zero_base_never_waits():
    rng = HighestRandom()
    assert RetryPolicy(base_backoff_ms=200).delay_ms(1, rng) == 0
    assert RetryPolicy(base_backoff_ms=0).delay_ms(5, rng) == 0
    assert rng.bounds == []


# ---- what is retried ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status, code",
    [
        (500, "InternalError"),
        (502, "BadGateway"),
        (503, "SlowDown"),
        (503, "503"),
        (504, "GatewayTimeout"),
        (429, "TooManyRequests"),
        (429, "429"),
        (400, "Throttling"),
        (400, "ThrottlingException"),
        (400, "RequestTimeout"),
        (400, "SlowDown"),
        (200, "InternalError"),
    ],
)
def test_throttling_server_errors_and_request_timeouts_are_retried(status, code):
    assert is_retryable(client_error(status, code))


@pytest.mark.parametrize(
    "status, code",
    [
        (400, "InvalidArgument"),
        (400, "BadDigest"),
        (403, "AccessDenied"),
        (403, "SignatureDoesNotMatch"),
        (404, "NoSuchKey"),
        (404, "NoSuchUpload"),
        (409, "ConditionalRequestConflict"),
        (412, "PreconditionFailed"),
        (501, "NotImplemented"),
        # A failed condition embedded in a 200 answer to CompleteMultipartUpload: botocore makes it a 500.
        (500, "PreconditionFailed"),
        (500, "ConditionalRequestConflict"),
    ],
)
def test_answers_are_not_retried(status, code):
    assert not is_retryable(client_error(status, code))


@pytest.mark.parametrize(
    "exc",
    [
        EndpointConnectionError(endpoint_url="http://s3"),
        ConnectTimeoutError(endpoint_url="http://s3"),
        ReadTimeoutError(endpoint_url="http://s3"),
        ConnectionClosedError(endpoint_url="http://s3"),
        ResponseStreamingError(error="reset"),
        IncompleteReadError(actual_bytes=1, expected_bytes=2),
        ConnectionResetError(),
        TimeoutError(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_connection_errors_and_timeouts_are_retried(exc):
    assert is_retryable(exc)


@pytest.mark.parametrize(
    "exc", [ParamValidationError(report="bad"), NoCredentialsError(), ValueError("x")], ids=lambda e: type(e).__name__
)
def test_mistakes_are_not_retried(exc):
    assert not is_retryable(exc)


def test_errors_are_described_in_one_line_without_botocores_retry_count():
    assert (
        describe(client_error(503, "SlowDown", "Please reduce your request rate."))
        == "HTTP 503 SlowDown: Please reduce your request rate."
    )
    assert describe(client_error(503, "503", "Service Unavailable")) == "HTTP 503: Service Unavailable"
    assert (
        describe(ReadTimeoutError(endpoint_url="http://s3/b/k"))
        == 'ReadTimeoutError: Read timeout on endpoint URL: "http://s3/b/k"'
    )


# ---- the retrier -----------------------------------------------------------------------------------


class Script:
    """A request that raises the given errors in turn, then returns ``result``."""

    def __init__(self, *errors: BaseException, result="ok"):
        self.errors = list(errors)
        self.calls = 0
        self.result = result

    def __call__(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return self.result


def retrier(attempts: int, base_ms: int = 200) -> tuple[Retrier, list[float]]:
    sleeps: list[float] = []
    return Retrier(RetryPolicy(attempts, base_ms), sleep=sleeps.append, rng=HighestRandom()), sleeps


def test_transient_faults_are_retried_with_the_policys_delays():
    r, sleeps = retrier(attempts=3)
    request = Script(client_error(503, "SlowDown"), ConnectionClosedError(endpoint_url="http://s3"))
    assert r.call("UploadPart 2 of s3://b/k", request) == "ok"
    assert request.calls == 3
    assert sleeps == [0.199, 0.399]  # the largest full-jitter delays before attempts 2 and 3, in seconds


def test_exhausted_attempts_name_the_request_the_attempts_and_the_last_fault():
    r, sleeps = retrier(attempts=3)
    last = client_error(503, "SlowDown", "Please reduce your request rate.")
    request = Script(client_error(500, "InternalError"), ReadTimeoutError(endpoint_url="http://s3"), last)
    with pytest.raises(S3RetriesExhaustedError) as caught:
        r.call("UploadPart 2 of s3://b/k", request)
    assert str(caught.value) == (
        "UploadPart 2 of s3://b/k failed after 3 attempts: HTTP 503 SlowDown: Please reduce your request rate."
    )
    assert isinstance(caught.value, S3Error) and caught.value.__cause__ is last
    assert (caught.value.request, caught.value.attempts, caught.value.last_error) == (
        "UploadPart 2 of s3://b/k",
        3,
        last,
    )
    assert request.calls == 3 and len(sleeps) == 2


@pytest.mark.parametrize("configured", [0, 1])
def test_one_attempt_means_no_retry(configured):
    r, sleeps = retrier(attempts=configured)
    with pytest.raises(S3RetriesExhaustedError, match=r"^PutObject of s3://b/k failed after 1 attempt: HTTP 500"):
        r.call("PutObject of s3://b/k", Script(client_error(500, "InternalError"), client_error(500, "InternalError")))
    assert sleeps == []


def test_an_answer_is_raised_unchanged_at_once():
    r, sleeps = retrier(attempts=5)
    conflict = client_error(412, "PreconditionFailed")
    request = Script(conflict)
    with pytest.raises(ClientError) as caught:
        r.call("PutObject of s3://b/m", request)
    assert caught.value is conflict and request.calls == 1 and sleeps == []


def test_an_answer_after_a_fault_ends_the_retries():
    r, _ = retrier(attempts=5)
    request = Script(client_error(503, "SlowDown"), client_error(404, "NoSuchKey"))
    with pytest.raises(ClientError, match="NoSuchKey"):
        r.call("GetObject of s3://b/k", request)
    assert request.calls == 2


# ---- settings and configuration ---------------------------------------------------------------------


def test_the_boto3_client_makes_one_attempt_per_call_with_the_configured_timeouts():
    settings = S3Settings(
        bucket="b", region="us-east-1", endpoint_url="http://127.0.0.1:1", read_timeout_s=1.5, connect_timeout_s=2.5
    )
    config = settings.client().meta.config
    assert config.retries["total_max_attempts"] == 1
    assert (config.read_timeout, config.connect_timeout) == (1.5, 2.5)


def test_connector_config_sets_attempts_and_backoff():
    def policy(**overrides) -> RetryPolicy:
        settings = resolve_settings(
            connector_config("t", "b", **overrides),
            {},
            bootstrap_servers="127.0.0.1:1",
            schema_registry_url="http://127.0.0.1:1",
        )
        return settings.s3.retry_policy()

    assert policy(**{"s3.part.retries": "5", "s3.retry.backoff.ms": "7"}) == RetryPolicy(5, 7)
    assert policy() == RetryPolicy(total_attempts=3, base_backoff_ms=200)
    assert ALL_KEYS["s3.retry.backoff.ms"].support is Support.FULL


# ---- the S3 client under faults (stub boto3 client) ---------------------------------------------------


def output(client: StubClient, attempts: int = 2) -> MultipartOutput:
    return MultipartOutput(
        client, "b", "k", part_size=4, retrier=Retrier(RetryPolicy(attempts, 1), sleep=lambda s: None)
    )


def test_a_part_that_keeps_failing_aborts_the_upload_and_the_output():
    client = StubClient(upload_part=[client_error(503, "SlowDown")] * 2)
    out = output(client)
    with pytest.raises(S3RetriesExhaustedError, match=r"^UploadPart 1 of s3://b/k failed after 2 attempts"):
        out.write(b"12345")
    assert client.calls == ["create_multipart_upload", "upload_part", "upload_part", "abort_multipart_upload"]
    with pytest.raises(S3Error, match="aborted after an earlier failure"):
        out.commit()
    out.abort()  # nothing left to abort
    assert client.calls[-1] == "abort_multipart_upload" and client.calls.count("abort_multipart_upload") == 1


def test_a_failed_completion_aborts_and_the_abort_itself_is_retried():
    client = StubClient(
        complete_multipart_upload=[client_error(500, "InternalError")] * 2,
        abort_multipart_upload=[ConnectionClosedError(endpoint_url="http://s3")],
    )
    out = output(client)
    out.write(b"12345")
    with pytest.raises(
        S3RetriesExhaustedError, match=r"^CompleteMultipartUpload \(If-None-Match: \*\) of s3://b/k failed after 2"
    ):
        out.commit()
    assert client.calls[-2:] == ["abort_multipart_upload", "abort_multipart_upload"]


def test_an_upload_already_gone_counts_as_aborted():
    client = StubClient(abort_multipart_upload=[client_error(404, "NoSuchUpload")])
    out = output(client)
    out.write(b"12345")
    out.abort()
    assert client.calls[-1] == "abort_multipart_upload"


def test_a_failed_abort_does_not_hide_the_failure_that_caused_it():
    client = StubClient(
        upload_part=[client_error(403, "AccessDenied")], abort_multipart_upload=[client_error(500, "InternalError")] * 2
    )
    with pytest.raises(S3Error, match=r"^UploadPart 1 of s3://b/k failed: HTTP 403 AccessDenied"):
        output(client).write(b"12345")


def test_a_completion_whose_answer_was_lost_is_recognised_by_the_stored_objects_etag():
    """Some servers answer a repeated CompleteMultipartUpload with 404 NoSuchUpload."""
    client = StubClient(complete_multipart_upload=[ConnectionClosedError(endpoint_url="http://s3")])
    out = output(client)
    out.write(b"123456789")  # parts of 4, 4 and (at commit) 1 bytes
    assert out.commit().size == 9
    assert client.calls[-3:] == ["complete_multipart_upload", "complete_multipart_upload", "head_object"]
    assert client.objects["k"] == b"123456789" and client.uploads == {}


class TakenOverWhileCompleting(StubClient):
    """The first completion's answer is lost, and meanwhile another export aborted this upload (a take-over's
    sweep) and stored its own object at the key."""

    def __init__(self, theirs: bytes):
        super().__init__()
        self.theirs = theirs

    def complete_multipart_upload(self, **kw):
        if self.calls.count("complete_multipart_upload") == 0:
            self.calls.append("complete_multipart_upload")
            self.uploads.pop(kw["UploadId"])
            self.put(kw["Key"], self.theirs)
            raise ConnectionClosedError(endpoint_url="http://s3")
        return super().complete_multipart_upload(**kw)


@pytest.mark.parametrize("theirs, read", [(b"123456780", True), (b"12345678", False)], ids=["same-size", "other-size"])
def test_a_completion_whose_answer_was_lost_does_not_take_another_object_for_its_own(theirs, read):
    client = TakenOverWhileCompleting(theirs)
    out = output(client)
    out.write(b"123456789")
    with pytest.raises(ObjectExistsError, match=r"^s3://b/k already exists with other bytes \(stored: "):
        out.commit()
    assert client.objects["k"] == theirs
    assert ("get_object" in client.calls) is read  # only an equal size needs the bytes compared


def test_no_upload_on_the_first_completion_attempt_is_a_failure():
    client = StubClient(complete_multipart_upload=[client_error(404, "NoSuchUpload")])
    out = output(client)
    out.write(b"12345")
    with pytest.raises(S3Error, match="NoSuchUpload"):
        out.commit()
    assert "head_object" not in client.calls


def store(client: StubClient, attempts: int = 3) -> S3ObjectStore:
    settings = S3Settings(bucket="b", region="us-east-1", total_attempts=attempts)
    return S3ObjectStore(client, settings, Retrier(settings.retry_policy(), sleep=lambda s: None))


def test_a_manifest_whose_first_answer_was_lost_is_not_taken_for_a_conflict():
    client = StubClient(put_object=[ConnectionClosedError(endpoint_url="http://s3")])
    store(client).put_if_absent("m/0.json", b"ours")  # attempt 1 landed unanswered; attempt 2 gets 412
    assert client.calls == ["put_object", "put_object", "get_object"]


def test_another_writers_manifest_is_a_conflict_even_after_a_lost_answer():
    client = StubClient(put_object=[ConnectionClosedError(endpoint_url="http://s3")])
    client.objects["m/0.json"] = b"theirs"
    with pytest.raises(ManifestConflictError):
        store(client).put_if_absent("m/0.json", b"ours")


def test_a_conflict_on_the_first_attempt_is_not_retried_nor_read():
    client = StubClient()
    client.objects["m/0.json"] = b"ours"
    with pytest.raises(ManifestConflictError):
        store(client).put_if_absent("m/0.json", b"ours")
    assert client.calls == ["put_object"]
