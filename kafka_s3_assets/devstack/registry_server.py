"""A local HTTP server speaking the Confluent Schema Registry REST API.

No Confluent-compatible registry can be installed here, so the devstack runs this one::

    python -m kafka_s3_assets.devstack.registry_server --host 127.0.0.1 --port 8081 --data-dir D

It serves what producers, confluent-kafka's serializers and deserializers (Avro, Protobuf, JSON
Schema) and this project use: registration and lookup, schemas by id and guid, subject versions
(``latest``, metadata), the versions of an id, the schemas referencing a version, compatibility
configuration and checks, deletes, and an empty associations answer; with Confluent's error codes
and content type. Reads take ``format=serialized``, which returns a PROTOBUF schema as a base64
``FileDescriptorProto`` (what confluent-kafka's Protobuf serdes ask for). Listing and raw-schema
views and modes (read-only, import), which nobody here uses, are not served. The rules live in
:mod:`registry_store`; this module only routes requests, serialises one store behind a lock,
and saves the state after every change.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast, overload
from urllib.parse import parse_qs, unquote, urlsplit

from kafka_s3_assets.devstack import registry_errors as errors
from kafka_s3_assets.devstack.registry_compat import default_checker
from kafka_s3_assets.devstack.registry_persistence import RegistryStateFile
from kafka_s3_assets.devstack.registry_store import RegistryStore, SchemaRequest

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class Query:
    """Query-string access with Confluent's (Jersey's) leniency: ``True``/``true`` both work."""

    def __init__(self, raw: str) -> None:
        self._values = parse_qs(raw, keep_blank_values=True)

    @overload
    def text(self, name: str) -> str | None: ...
    @overload
    def text(self, name: str, default: str) -> str: ...

    def text(self, name: str, default: str | None = None) -> str | None:
        values = self._values.get(name)
        return values[0] if values else default

    def texts(self, name: str) -> list[str]:
        return list(self._values.get(name, []))

    def flag(self, name: str, *aliases: str) -> bool:
        return any((self.text(n) or "").strip().lower() == "true" for n in (name, *aliases))

    def integer(self, name: str, default: int) -> int:
        try:
            return int(self.text(name, str(default)))
        except ValueError:
            raise errors.bad_request(f"query parameter '{name}' must be an integer") from None


@dataclass
class Request:
    params: dict[str, str]
    query: Query
    body: Any


@dataclass
class Response:
    status: int
    payload: Any  # JSON-serialisable


Handler = Callable[["RegistryApi", Request], Response]


class RegistryApi:
    """Routes requests to a :class:`RegistryStore` and persists it after each change."""

    def __init__(self, store: RegistryStore, state_file: RegistryStateFile | None) -> None:
        self.store = store
        self.state_file = state_file
        self.lock = threading.Lock()
        self._routes: list[tuple[str, tuple[str, ...], Handler]] = []
        self._register_routes()

    def handle(self, method: str, path: str, query: str, body: Any) -> Response:
        segments = tuple(unquote(s) for s in path.strip("/").split("/")) if path.strip("/") else ()
        handler, params, path_matched = self._match(method, segments)
        if handler is None:
            raise errors.method_not_allowed() if path_matched else errors.route_not_found()
        with self.lock:
            revision = self.store.revision
            try:
                return handler(self, Request(params, Query(query), body))
            finally:
                # Persist even when the handler failed half-way: the store only changes
                # revision for changes it actually made.
                if self.store.revision != revision and self.state_file is not None:
                    self.state_file.save(self.store)

    def _match(self, method: str, segments: tuple[str, ...]) -> tuple[Handler | None, dict[str, str], bool]:
        path_matched = False
        for route_method, pattern, handler in self._routes:
            params = _match_segments(pattern, segments)
            if params is None:
                continue
            path_matched = True
            if route_method == method:
                return handler, params, True
        return None, {}, path_matched

    def _route(self, method: str, pattern: str, handler: Handler) -> None:
        self._routes.append((method, tuple(pattern.strip("/").split("/")) if pattern != "/" else (), handler))

    def _register_routes(self) -> None:
        r = self._route
        r("GET", "/schemas/ids/{id}", _schema_by_id)
        r("GET", "/schemas/ids/{id}/versions", _versions_of_id)
        r("GET", "/schemas/guids/{guid}", _schema_by_guid)
        r("GET", "/subjects", _list_subjects)
        r("POST", "/subjects/{subject}", _lookup)
        r("DELETE", "/subjects/{subject}", _delete_subject)
        r("GET", "/subjects/{subject}/versions", _list_versions)
        r("POST", "/subjects/{subject}/versions", _register)
        r("GET", "/subjects/{subject}/versions/{version}", _get_version)
        r("GET", "/subjects/{subject}/versions/{version}/referencedby", _referenced_by)
        r("DELETE", "/subjects/{subject}/versions/{version}", _delete_version)
        r("GET", "/subjects/{subject}/metadata", _latest_with_metadata)
        r("GET", "/config", lambda api, req: Response(200, api.store.global_config()))
        r("PUT", "/config", lambda api, req: Response(200, api.store.set_global_config(req.body)))
        r("DELETE", "/config", lambda api, req: Response(200, api.store.delete_global_config()))
        r("GET", "/config/{subject}", _subject_config)
        r("PUT", "/config/{subject}", _set_subject_config)
        r("DELETE", "/config/{subject}", _delete_subject_config)
        r("POST", "/compatibility/subjects/{subject}/versions/{version}", _check_compatibility)
        r("POST", "/compatibility/subjects/{subject}/versions", _check_compatibility)
        # Data-contract associations: none exist here. Answering with an empty list, as Confluent
        # does for a resource without associations, lets confluent-kafka's default "associated"
        # subject-name strategy fall back to the topic-name strategy (it takes a 404 the same way).
        r("GET", "/associations/resources/{namespace}/{name}", lambda api, req: Response(200, []))


def _match_segments(pattern: tuple[str, ...], segments: tuple[str, ...]) -> dict[str, str] | None:
    if len(pattern) != len(segments):
        return None
    params = {}
    for expected, actual in zip(pattern, segments, strict=True):
        if expected.startswith("{") and expected.endswith("}"):
            params[expected[1:-1]] = actual
        elif expected != actual:
            return None
    return params


def _schema_id(req: Request) -> int:
    try:
        return int(req.params["id"])
    except ValueError:
        raise errors.schema_not_found(req.params["id"]) from None


def _page(items: list, query: Query) -> list:
    offset = max(query.integer("offset", 0), 0)
    limit = query.integer("limit", -1)
    return items[offset:] if limit < 0 else items[offset : offset + limit]


def _deleted_only(query: Query) -> bool:
    # confluent-kafka sends deleted_only; the Confluent server documents deletedOnly.
    return query.flag("deleted_only", "deletedOnly")


def _format(req: Request) -> str | None:
    return req.query.text("format")


def _schema_by_id(api: RegistryApi, req: Request) -> Response:
    # ``subject`` (a context hint for Confluent) changes nothing here: ids are global.
    record = api.store.schema_by_id(_schema_id(req))
    return Response(200, {**record.to_json(api.store.schema_text(record, _format(req))), "guid": record.guid})


def _versions_of_id(api: RegistryApi, req: Request) -> Response:
    pairs = api.store.versions_of_id(
        _schema_id(req),
        subject=req.query.text("subject"),
        include_deleted=req.query.flag("deleted"),
    )
    return Response(200, _page([{"subject": s, "version": v} for s, v in pairs], req.query))


def _schema_by_guid(api: RegistryApi, req: Request) -> Response:
    record = api.store.schema_by_guid(req.params["guid"])
    schema = api.store.schema_text(record, _format(req))
    return Response(200, {**record.to_json(schema), "id": record.id, "guid": record.guid})


def _list_subjects(api: RegistryApi, req: Request) -> Response:
    subjects = api.store.subjects(
        include_deleted=req.query.flag("deleted"),
        deleted_only=_deleted_only(req.query),
        prefix=req.query.text("subjectPrefix", "") or "",
    )
    return Response(200, _page(subjects, req.query))


def _lookup(api: RegistryApi, req: Request) -> Response:
    view = api.store.lookup(
        req.params["subject"],
        SchemaRequest.from_json(req.body),
        normalize=req.query.flag("normalize"),
        include_deleted=req.query.flag("deleted"),
    )
    return Response(200, view.to_json(api.store.schema_text(view.schema, _format(req))))


def _delete_subject(api: RegistryApi, req: Request) -> Response:
    deleted = api.store.delete_subject(req.params["subject"], permanent=req.query.flag("permanent"))
    return Response(200, deleted)


def _list_versions(api: RegistryApi, req: Request) -> Response:
    versions = api.store.versions(
        req.params["subject"],
        include_deleted=req.query.flag("deleted"),
        deleted_only=_deleted_only(req.query),
    )
    return Response(200, _page(versions, req.query))


def _register(api: RegistryApi, req: Request) -> Response:
    view = api.store.register(
        req.params["subject"],
        SchemaRequest.from_json(req.body),
        normalize=req.query.flag("normalize"),
    )
    # Confluent 7.x answers {"id": N}; newer servers add the version, guid and schema, which
    # newer clients cache. Sending all of it suits both.
    return Response(
        200,
        {"id": view.id, "version": view.version, "guid": view.schema.guid, **view.schema.to_json()},
    )


def _get_version(api: RegistryApi, req: Request) -> Response:
    view = api.store.get_version(
        req.params["subject"], req.params["version"], include_deleted=req.query.flag("deleted")
    )
    return Response(200, view.to_json(api.store.schema_text(view.schema, _format(req))))


def _referenced_by(api: RegistryApi, req: Request) -> Response:
    ids = api.store.referenced_by(
        req.params["subject"], req.params["version"], include_deleted=req.query.flag("deleted")
    )
    return Response(200, _page(ids, req.query))


def _delete_version(api: RegistryApi, req: Request) -> Response:
    deleted = api.store.delete_version(
        req.params["subject"], req.params["version"], permanent=req.query.flag("permanent")
    )
    return Response(200, deleted)


def _latest_with_metadata(api: RegistryApi, req: Request) -> Response:
    keys, values = req.query.texts("key"), req.query.texts("value")
    if len(keys) != len(values):
        raise errors.bad_request("every metadata 'key' needs a matching 'value'")
    view = api.store.latest_with_metadata(
        req.params["subject"],
        dict(zip(keys, values, strict=True)),
        include_deleted=req.query.flag("deleted"),
    )
    return Response(200, view.to_json(api.store.schema_text(view.schema, _format(req))))


def _subject_config(api: RegistryApi, req: Request) -> Response:
    config = api.store.subject_config(req.params["subject"], default_to_global=req.query.flag("defaultToGlobal"))
    return Response(200, config)


def _set_subject_config(api: RegistryApi, req: Request) -> Response:
    return Response(200, api.store.set_subject_config(req.params["subject"], req.body))


def _delete_subject_config(api: RegistryApi, req: Request) -> Response:
    return Response(200, api.store.delete_subject_config(req.params["subject"]))


def _check_compatibility(api: RegistryApi, req: Request) -> Response:
    problems = api.store.check_compatibility(
        req.params["subject"],
        req.params.get("version"),
        SchemaRequest.from_json(req.body),
        normalize=req.query.flag("normalize"),
    )
    body: dict[str, Any] = {"is_compatible": not problems}
    if req.query.flag("verbose"):
        body["messages"] = problems
    return Response(200, body)


class RegistryRequestHandler(BaseHTTPRequestHandler):
    """Translates HTTP requests into :meth:`RegistryApi.handle` calls."""

    protocol_version = "HTTP/1.1"  # keep-alive: the registry clients reuse connections
    server_version = "kafka-s3-assets-devstack-registry"
    api: RegistryApi  # set on the subclass built by make_server

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        # Read the body before anything can fail, so a kept-alive connection stays in sync.
        raw_body = self._read_body()
        url = urlsplit(self.path)
        try:
            body = json.loads(raw_body) if raw_body.strip() else None
        except ValueError as exc:
            self._send_error(errors.bad_request(f"Malformed JSON body: {exc}"))
            return
        try:
            response = self.api.handle(method, url.path, url.query, body)
        except errors.RegistryError as exc:
            self._send_error(exc)
            return
        except Exception as exc:  # report, keep serving
            traceback.print_exc(file=sys.stderr)
            self._send_error(errors.RegistryError(50001, f"Internal error: {exc}"))
            return
        payload = json.dumps(response.payload)
        self._send(response.status, payload.encode("utf-8"))

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_error(self, error: errors.RegistryError) -> None:
        self._send(error.http_status, json.dumps(error.to_json()).encode("utf-8"))

    def _send(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def make_server(host: str, port: int, data_dir: Path | None) -> ThreadingHTTPServer:
    """A ready-to-serve registry server on ``host:port`` keeping its state in ``data_dir``.

    ``data_dir`` None keeps the state in memory only (handy for in-process tests).
    """
    state_file = RegistryStateFile(data_dir) if data_dir is not None else None
    checker = default_checker()  # Confluent's Avro compatibility rules
    store = state_file.load(checker) if state_file is not None else RegistryStore(checker=checker)
    api = RegistryApi(store, state_file)
    handler = type("BoundRegistryRequestHandler", (RegistryRequestHandler,), {"api": api})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Local Confluent-compatible schema registry (kafka-s3-assets devstack)."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    args = parser.parse_args(argv)

    server = make_server(args.host, args.port, args.data_dir)
    host, port = server.server_address[:2]
    assert isinstance(host, str)  # getsockname() of an AF_INET(6) socket: never bytes

    def stop(signum: int, _frame: object) -> None:
        # shutdown() waits for serve_forever to return, so it must run on another thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(
        f"schema registry listening on http://{host}:{port}, state in {args.data_dir.resolve()}",
        flush=True,
    )
    try:
        server.serve_forever()
    finally:
        server.server_close()
        # typeshed types RequestHandlerClass as a callable; make_server made it a RegistryRequestHandler subclass.
        with cast(type[RegistryRequestHandler], server.RequestHandlerClass).api.lock:
            pass  # let a request that is saving the state finish before the process exits
    print("schema registry stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
