"""Local stand-ins for the AWS endpoints credentials come from, for the credentials provider tests.

* :class:`StsRecorder` forwards STS requests to the devstack's moto server (which implements AssumeRole
  and AssumeRoleWithWebIdentity) and records each call: its action, parameters, the key that signed it
  and the session it granted; or answers every call with an error that echoes what it was sent.
* :class:`FakeInstanceMetadata` plays EC2's instance metadata service (IMDSv2: a token, then the role's
  credentials), :class:`FakeContainerCredentials` ECS's container credentials endpoint. Neither service
  exists off AWS; these answer the documented requests with the documented JSON.

Each serves on a free loopback port from a daemon thread; use them as context managers.
"""

from __future__ import annotations

import datetime
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def signing_scope(authorization: str | None) -> tuple[str | None, str | None]:
    """(access key id, region) of a SigV4 Authorization header (``Credential=AKID/date/region/service/...``)."""
    match = re.search(r"Credential=([^/]+)/[^/]+/([^/]+)/", authorization or "")
    return (match.group(1), match.group(2)) if match else (None, None)


class _Server:
    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, format, *args) -> None:
        pass

    def answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@dataclass(frozen=True)
class StsCall:
    action: str
    params: dict[str, str]
    signed_by: str | None  # None: an unsigned call (AssumeRoleWithWebIdentity)
    signed_in_region: str | None
    status: int
    granted_key_id: str | None
    granted_secret_key: str | None
    granted_session_token: str | None
    at: float  # time.time() when it was answered


class StsRecorder(_Server):
    def __init__(self, upstream_url: str, *, echo_error: bool = False):
        self.calls: list[StsCall] = []
        self._lock = threading.Lock()
        recorder = self

        class Handler(_Quiet):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                params = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode()).items()}
                if echo_error:  # the worst an STS could do: repeat the request's parameters in its error
                    status, answer = (
                        403,
                        (
                            "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>Not authorized "
                            f"to assume {params.get('RoleArn')} with external id {params.get('ExternalId')}</Message>"
                            "</Error><RequestId>echo</RequestId></ErrorResponse>"
                        ).encode(),
                    )
                else:
                    request = urllib.request.Request(
                        upstream_url,
                        data=body,
                        method="POST",
                        headers={k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")},
                    )
                    try:
                        with urllib.request.urlopen(request, timeout=30) as response:
                            status, answer = response.status, response.read()
                    except urllib.error.HTTPError as error:
                        status, answer = error.code, error.read()
                text = answer.decode(errors="replace")
                granted = re.search(r"<AccessKeyId>([^<]+)</AccessKeyId>", text)
                secret = re.search(r"<SecretAccessKey>([^<]+)</SecretAccessKey>", text)
                token = re.search(r"<SessionToken>([^<]+)</SessionToken>", text)
                with recorder._lock:
                    recorder.calls.append(
                        StsCall(
                            params.get("Action", ""),
                            params,
                            *signing_scope(self.headers.get("Authorization")),
                            status,
                            granted.group(1) if granted else None,
                            secret.group(1) if secret else None,
                            token.group(1) if token else None,
                            time.time(),
                        )
                    )
                self.answer(status, answer, "text/xml")

        super().__init__(Handler)

    def of(self, action: str) -> list[StsCall]:
        with self._lock:
            return [c for c in self.calls if c.action == action]


def _expiration(seconds: float) -> str:
    moment = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeInstanceMetadata(_Server):
    """IMDSv2: ``PUT /latest/api/token``, then ``GET /latest/meta-data/iam/security-credentials/`` (the role
    name) and ``…/<role>`` (its credentials). Point botocore at it with $AWS_EC2_METADATA_SERVICE_ENDPOINT."""

    ROLE = "exporter-instance-role"
    TOKEN = "imds-session-token"

    def __init__(self, access_key_id: str, secret_access_key: str, session_token: str):
        self.paths: list[str] = []
        server = self
        credentials = {
            "Code": "Success",
            "Type": "AWS-HMAC",
            "AccessKeyId": access_key_id,
            "SecretAccessKey": secret_access_key,
            "Token": session_token,
        }

        class Handler(_Quiet):
            def do_PUT(self) -> None:  # noqa: N802
                server.paths.append("PUT " + self.path)
                if self.path == "/latest/api/token":
                    self.answer(200, server.TOKEN.encode(), "text/plain")
                else:
                    self.answer(404, b"", "text/plain")

            def do_GET(self) -> None:  # noqa: N802
                server.paths.append("GET " + self.path)
                if self.headers.get("X-aws-ec2-metadata-token") != server.TOKEN:
                    self.answer(401, b"", "text/plain")
                elif self.path == "/latest/meta-data/iam/security-credentials/":
                    self.answer(200, server.ROLE.encode(), "text/plain")
                elif self.path == f"/latest/meta-data/iam/security-credentials/{server.ROLE}":
                    body = {**credentials, "LastUpdated": _expiration(0), "Expiration": _expiration(6 * 3600)}
                    self.answer(200, json.dumps(body).encode(), "application/json")
                else:
                    self.answer(404, b"", "text/plain")

        super().__init__(Handler)


class FakeContainerCredentials(_Server):
    """ECS's credentials endpoint: ``GET <path>`` with the task's authorization token, answered with the
    role's credentials. Point botocore at it with $AWS_CONTAINER_CREDENTIALS_FULL_URI (a loopback URL) and
    $AWS_CONTAINER_AUTHORIZATION_TOKEN."""

    PATH = "/v2/credentials/exporter-task"
    AUTHORIZATION = "container-authorization-token"

    def __init__(self, access_key_id: str, secret_access_key: str, session_token: str):
        self.paths: list[str] = []
        server = self
        credentials = {
            "AccessKeyId": access_key_id,
            "SecretAccessKey": secret_access_key,
            "Token": session_token,
            "RoleArn": "arn:aws:iam::123456789012:role/exporter-task-role",
        }

        class Handler(_Quiet):
            def do_GET(self) -> None:  # noqa: N802
                server.paths.append(self.path)
                if self.path != server.PATH or self.headers.get("Authorization") != server.AUTHORIZATION:
                    self.answer(403, b'{"message": "forbidden"}', "application/json")
                else:
                    body = {**credentials, "Expiration": _expiration(6 * 3600)}
                    self.answer(200, json.dumps(body).encode(), "application/json")

        super().__init__(Handler)

    @property
    def full_uri(self) -> str:
        return self.url + self.PATH
