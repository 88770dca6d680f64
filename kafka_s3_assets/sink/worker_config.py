"""A Kafka Connect worker's properties file, given with a connector config as ``connect-standalone WORKER
CONNECTOR`` takes them: its worker-level settings apply, and the connector config overrides them as in
Connect.

Applied (the connector config wins, key by key):

- ``bootstrap.servers``;
- ``consumer.<setting>``: the sink's consumer (the connector's ``consumer.override.*`` wins over them);
  ``client.dns.lookup``, which Connect also gives the sink's consumer;
- ``producer.<setting>`` / ``admin.<setting>``: the dead letter queue's producer and admin client, below
  the connector's ``producer.override.*`` / ``admin.override.*``;
- ``config.providers`` (the lists are joined) and ``config.providers.<name>.*``;
- ``offset.flush.interval.ms``;
- the converters ``key.converter`` / ``value.converter`` / ``header.converter`` with their sub-keys, as
  Connect takes them: a connector that sets the converter class gets only its own sub-keys; one that does
  not gets the worker's converter with the worker's sub-keys, and its own sub-keys are not used (a warning
  names them).

Worker keys that mean nothing here are listed below, each with the reason, and ignored. Any other key is
an error naming it, as in a connector config: a worker file is small and written by hand, and a key we
would skip unread (a typo of ``value.converter``, a setting of a newer Kafka) could change what is exported.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config_providers import PROVIDERS_KEY, is_provider_key, listed_providers
from .errors import ConfigError, ConfigProblem
from .properties import MalformedProperties, parse_properties

log = logging.getLogger(__name__)

CONVERTER_KEYS = ("key.converter", "value.converter", "header.converter")

# Genuine Connect worker keys (WorkerConfig, DistributedConfig, StandaloneConfig) without meaning for an export.
IGNORED_KEYS = {
    "group.id": "the id of a distributed worker cluster; the export's consumer group is connect-<name>",
    "client.id": "names the worker's own clients; the sink consumer's client.id is Connect's per task",
    "config.storage.topic": "Connect's internal topic of connector configs; ours are files",
    "config.storage.replication.factor": "see config.storage.topic",
    "offset.storage.topic": "Connect's internal topic of source connector offsets; a sink uses its consumer group",
    "offset.storage.partitions": "see offset.storage.topic",
    "offset.storage.replication.factor": "see offset.storage.topic",
    "offset.storage.file.filename": "connect-standalone's file of source connector offsets; a sink uses its "
    "consumer group",
    "status.storage.topic": "Connect's internal topic of task states; an export's state is its Dagster run",
    "status.storage.partitions": "see status.storage.topic",
    "status.storage.replication.factor": "see status.storage.topic",
    "offset.flush.timeout.ms": "bounds the wait for a source task's offset flush; sinks commit after each "
    "object batch is in S3",
    "task.shutdown.graceful.timeout.ms": "stopping tasks in the JVM; an export run ends when it is done",
    "plugin.path": "where the JVM finds connector jars; nothing is loaded here",
    "plugin.discovery": "see plugin.path",
    "listeners": "the REST API; here the CLI and Dagster start exports",
    "admin.listeners": "see listeners",
    "access.control.allow.origin": "see listeners",
    "access.control.allow.methods": "see listeners",
    "response.http.headers.config": "see listeners",
    "connector.client.config.override.policy": "which connector client overrides the REST API accepts; the "
    "connector's consumer/producer/admin overrides always apply here",
    "heartbeat.interval.ms": "membership of the distributed worker group",
    "session.timeout.ms": "see heartbeat.interval.ms",
    "rebalance.timeout.ms": "see heartbeat.interval.ms",
    "worker.sync.timeout.ms": "see heartbeat.interval.ms",
    "worker.unsync.backoff.ms": "see heartbeat.interval.ms",
    "scheduled.rebalance.max.delay.ms": "see heartbeat.interval.ms",
    "connect.protocol": "see heartbeat.interval.ms",
    "inter.worker.key.generation.algorithm": "signs requests between distributed workers",
    "inter.worker.key.size": "see inter.worker.key.generation.algorithm",
    "inter.worker.key.ttl.ms": "see inter.worker.key.generation.algorithm",
    "inter.worker.signature.algorithm": "see inter.worker.key.generation.algorithm",
    "inter.worker.verification.algorithms": "see inter.worker.key.generation.algorithm",
    "exactly.once.source.support": "source connectors only",
    "topic.creation.enable": "source connectors only",
    "metric.reporters": "JMX metrics of the worker; an export's figures are in its Dagster run",
    "metrics.num.samples": "see metric.reporters",
    "metrics.sample.window.ms": "see metric.reporters",
    "metrics.recording.level": "see metric.reporters",
    "auto.include.jmx.reporter": "see metric.reporters",
    # The worker's own clients (group membership, internal topics). Connect gives the sink's consumer only
    # the consumer.-prefixed settings, so these never reached it either.
    "security.protocol": "the worker's own clients; the sink's consumer takes consumer.security.protocol",
    "metadata.max.age.ms": "the worker's own clients",
    "send.buffer.bytes": "the worker's own clients",
    "receive.buffer.bytes": "the worker's own clients",
    "reconnect.backoff.ms": "the worker's own clients",
    "reconnect.backoff.max.ms": "the worker's own clients",
    "retry.backoff.ms": "the worker's own clients",
    "retry.backoff.max.ms": "the worker's own clients",
    "request.timeout.ms": "the worker's own clients",
    "connections.max.idle.ms": "the worker's own clients",
    "socket.connection.setup.timeout.ms": "the worker's own clients",
    "socket.connection.setup.timeout.max.ms": "the worker's own clients",
    # Removed from Kafka 3.0, still found in old worker files.
    "internal.key.converter": "converter of Connect's internal topics",
    "internal.value.converter": "converter of Connect's internal topics",
    "rest.host.name": "the REST API",
    "rest.port": "the REST API",
}
IGNORED_PREFIXES = {
    "rest.": "the REST API (rest.advertised.*, rest.extension.classes, ...)",
    "listeners.https.": "TLS of the REST API",
    "admin.listeners.https.": "TLS of the REST API's admin endpoints",
    "metrics.context.": "JMX metrics of the worker",
    "sasl.": "the worker's own clients; the sink's consumer takes consumer.sasl.*",
    "ssl.": "the worker's own clients and the REST API's TLS; the sink's consumer takes consumer.ssl.*",
    "internal.key.converter.": "converter of Connect's internal topics",
    "internal.value.converter.": "converter of Connect's internal topics",
}
# Worker keys that become connector-level keys under another name (Connect's precedence is kept: the
# connector's own key of that name wins).
RENAMED_PREFIXES = {"producer.": "producer.override.", "admin.": "admin.override."}
RENAMED_KEYS = {"client.dns.lookup": "consumer.client.dns.lookup"}
APPLIED_KEYS = ("bootstrap.servers", "offset.flush.interval.ms", *CONVERTER_KEYS)
APPLIED_PREFIXES = ("consumer.", *(k + "." for k in CONVERTER_KEYS))


@dataclass(frozen=True)
class WorkerConfig:
    path: str
    settings: Mapping[str, str]  # connector-level keys, as the worker gives them

    @property
    def source(self) -> str:
        return f"worker config {self.path}"


def read_worker_config(path: str | Path) -> WorkerConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            [ConfigProblem("<worker config>", f"Cannot read worker config {path}: {exc.strerror}")]
        ) from exc
    try:
        properties = parse_properties(text)
    except MalformedProperties as exc:
        raise ConfigError([ConfigProblem("<worker config>", f"{path} is not a valid properties file: {exc}")]) from None
    return worker_config(properties, str(path))


def _ignored_reason(key: str) -> str | None:
    if key in IGNORED_KEYS:
        return IGNORED_KEYS[key]
    return next((reason for prefix, reason in IGNORED_PREFIXES.items() if key.startswith(prefix)), None)


def worker_config(properties: Mapping[str, str], path: str) -> WorkerConfig:
    """Sort a worker's keys: applied (as connector-level keys), ignored, or errors naming them."""
    settings: dict[str, str] = {}
    ignored: list[str] = []
    problems: list[ConfigProblem] = []
    for key, value in properties.items():
        if key in APPLIED_KEYS or key.startswith(APPLIED_PREFIXES) or is_provider_key(key):
            settings[key] = value
        elif _ignored_reason(key) is not None:  # before the renames: admin.listeners is not an admin client key
            ignored.append(key)
        elif key in RENAMED_KEYS:
            settings.setdefault(RENAMED_KEYS[key], value)  # the worker's consumer.client.dns.lookup wins
        elif prefix := next((p for p in RENAMED_PREFIXES if key.startswith(p) and key != p), None):
            settings[RENAMED_PREFIXES[prefix] + key[len(prefix) :]] = value
        else:
            problems.append(
                ConfigProblem(key, f"Unknown Kafka Connect worker configuration key '{key}' in worker config {path}")
            )
    if problems:
        raise ConfigError(problems)
    if ignored:
        log.info("Worker config %s: keys without meaning for an export, ignored: %s", path, ", ".join(ignored))
    return WorkerConfig(path, settings)


def merge_worker_config(worker: WorkerConfig, connector: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The connector config over the worker's settings, as Connect combines them, and where each key
    that came from the worker came from (for messages)."""
    merged: dict[str, Any] = dict(worker.settings)
    unused: list[str] = []
    for converter in CONVERTER_KEYS:
        prefix = converter + "."
        if converter in connector:  # the connector's converter, configured by its own sub-keys only
            for key in [k for k in merged if k == converter or k.startswith(prefix)]:
                del merged[key]
        elif converter in worker.settings:  # the worker's converter, configured by the worker's sub-keys only
            unused.extend(str(k) for k in connector if str(k).startswith(prefix))
    if unused:
        log.warning(
            "%s are not used: as in Kafka Connect, converter settings apply only with the converter class "
            "they configure, and the connector config does not set it (the worker config %s does)",
            ", ".join(unused),
            worker.path,
        )
    for key, value in connector.items():
        if str(key) not in unused:
            merged[str(key)] = value
    # The providers of both: a connector may add its own to those the worker defines.
    names = listed_providers(worker.settings.get(PROVIDERS_KEY)) + listed_providers(connector.get(PROVIDERS_KEY))
    if names:
        merged[PROVIDERS_KEY] = ",".join(dict.fromkeys(names))
    sources = {k: worker.source for k in worker.settings if k in merged and k not in connector}
    return merged, sources
