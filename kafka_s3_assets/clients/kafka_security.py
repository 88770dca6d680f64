"""Kafka client security settings: Kafka Connect's (Java client) keys mapped to librdkafka's.

Connect users have their security settings as the Java client takes them: ``security.protocol``,
``sasl.mechanism``, ``sasl.jaas.config`` (a JAAS login module line holding the credentials),
``ssl.truststore.*`` / ``ssl.keystore.*`` (JKS by default), ``ssl.key.password``. confluent-kafka
(librdkafka) names and reads them differently. This module turns the one into the other (a JKS or
PKCS12 truststore is read here and its certificates passed inline), or says clearly why it cannot (a
JKS keystore, a Java callback class), naming the key. librdkafka's own names
(``sasl.username``, ``ssl.ca.location``, ...) are accepted as they are.

Secret values come back wrapped in ``Secret`` (never printed); messages never contain a value of a
secret key, nor the JAAS line.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..sink.secrets import KAFKA_CLIENT_SECRET_KEYS, Secret, reveal
from .java_truststore import TruststoreError, truststore_pem

log = logging.getLogger(__name__)

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")

# Keys whose values are secrets, in either naming: wrapped in Secret, never printed.
SECRET_KEYS = KAFKA_CLIENT_SECRET_KEYS

# librdkafka security settings taken as they are (confluent-kafka users' names).
LIBRDKAFKA_KEYS = frozenset(
    {
        "sasl.username",
        "sasl.password",
        "sasl.kerberos.principal",
        "sasl.kerberos.keytab",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.oauthbearer.method",
        "sasl.oauthbearer.client.id",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.scope",
        "sasl.oauthbearer.extensions",
        "sasl.oauthbearer.config",
        "enable.sasl.oauthbearer.unsecure.jwt",
        "ssl.ca.location",
        "ssl.ca.pem",
        "ssl.ca.certificate.stores",
        "ssl.certificate.location",
        "ssl.certificate.pem",
        "ssl.key.location",
        "ssl.key.pem",
        "ssl.crl.location",
        "ssl.sigalgs.list",
        "ssl.curves.list",
        "ssl.providers",
        "ssl.engine.location",
        "ssl.engine.id",
        "enable.ssl.certificate.verification",
        "ssl.cipher.suites",
    }
)

# Same name and meaning in both clients (values checked where it matters).
SHARED_KEYS = frozenset({"sasl.kerberos.service.name", "sasl.oauthbearer.token.endpoint.url", "ssl.key.password"})

# Java-only settings that tune the JVM's TLS or login machinery; librdkafka has no such knob and does
# the equivalent itself (OpenSSL's protocol negotiation, its own token refresh). Accepted, logged.
JVM_ONLY_NO_EFFECT = frozenset(
    {
        "ssl.protocol",
        "ssl.enabled.protocols",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.secure.random.implementation",
        "ssl.provider",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds",
        "sasl.login.connect.timeout.ms",
        "sasl.login.read.timeout.ms",
        "sasl.login.retry.backoff.ms",
        "sasl.login.retry.backoff.max.ms",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.oauthbearer.scope.claim.name",
        "sasl.oauthbearer.sub.claim.name",
        "sasl.oauthbearer.jwks.endpoint.url",
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
        "sasl.oauthbearer.clock.skew.seconds",
        "sasl.oauthbearer.expected.audience",
        "sasl.oauthbearer.expected.issuer",
    }
)

# Java classes librdkafka cannot load.
JAVA_CLASS_KEYS = frozenset(
    {
        "sasl.login.callback.handler.class",
        "sasl.client.callback.handler.class",
        "sasl.login.class",
        "ssl.engine.factory.class",
        "security.providers",
    }
)

# Handled below, with the keys they go with.
STORE_KEYS = frozenset(
    {
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.certificates",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
    }
)
SPECIAL_KEYS = frozenset(
    {"security.protocol", "sasl.mechanism", "sasl.jaas.config", "ssl.endpoint.identification.algorithm"}
)

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KERBEROS_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
_MODULE_MECHANISMS = {
    PLAIN_MODULE: ("PLAIN",),
    SCRAM_MODULE: ("SCRAM-SHA-256", "SCRAM-SHA-512"),
    OAUTH_MODULE: ("OAUTHBEARER",),
    KERBEROS_MODULE: ("GSSAPI",),
}
_JAAS_LINE = re.compile(r"^\s*([A-Za-z_$][\w.$]*)\s+(required|requisite|sufficient|optional)\b(.*?);?\s*$", re.S)
_JAAS_OPTION = re.compile(r'\s*([\w.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s";]+))')


def is_security_key(key: str) -> bool:
    """Keys this module owns (in either client's naming)."""
    return key in ("security.protocol", "security.providers") or key.startswith(
        ("sasl.", "ssl.", "enable.ssl.", "enable.sasl.")
    )


@dataclass(frozen=True)
class SecurityProblem:
    key: str  # the key as the mapping knows it (without any consumer.override. prefix)
    message: str  # never holds a secret value


class _Mapper:
    def __init__(self, settings: Mapping[str, str | Secret]):
        self.settings = {k: v for k, v in settings.items() if reveal(v) is not None}
        self.out: dict[str, str | Secret] = {}
        self.problems: list[SecurityProblem] = []
        self.inferred_mechanism: str | None = None

    def value(self, key: str) -> str | None:
        value = reveal(self.settings.get(key))
        return None if value is None else str(value).strip()

    def problem(self, key: str, message: str) -> None:
        self.problems.append(SecurityProblem(key, message))

    def put(self, key: str, value: str | Secret) -> None:
        self.out[key] = Secret(reveal(value)) if key in SECRET_KEYS and not isinstance(value, Secret) else value

    def run(self) -> None:
        for key in sorted(self.settings):
            if key in LIBRDKAFKA_KEYS or key in SHARED_KEYS:
                pass  # copied last, below
            elif key in JVM_ONLY_NO_EFFECT:
                log.info("Kafka client setting %s has no librdkafka equivalent; it has no effect here", key)
            elif key in JAVA_CLASS_KEYS:
                self.problem(
                    key,
                    f"{key} names a Java class, which librdkafka (confluent-kafka) cannot load; "
                    "use librdkafka's own settings (e.g. sasl.oauthbearer.method=oidc)",
                )
            elif key not in STORE_KEYS and key not in SPECIAL_KEYS:
                self.problem(key, f"Unknown Kafka client security setting '{key}'")
        self.protocol()
        self.jaas()
        self.mechanism()
        self.endpoint_identification()
        self.truststore()
        self.keystore()
        # librdkafka's own names last: set explicitly (e.g. sasl.password from a deployment's secret store),
        # they win over values derived from Java keys (e.g. the password inside sasl.jaas.config).
        for key in sorted(self.settings):
            if key in LIBRDKAFKA_KEYS or key in SHARED_KEYS:
                self.put(key, self.settings[key])

    def protocol(self) -> None:
        protocol = self.value("security.protocol")
        if protocol is None:
            return
        if protocol.upper() not in SECURITY_PROTOCOLS:
            self.problem(
                "security.protocol",
                f"Invalid value {protocol} for configuration security.protocol: "
                f"use one of {', '.join(SECURITY_PROTOCOLS)}",
            )
        else:
            self.put("security.protocol", protocol.lower())

    def mechanism(self) -> None:
        mechanism = self.value("sasl.mechanism")
        if mechanism is None:
            if self.inferred_mechanism:
                self.put("sasl.mechanism", self.inferred_mechanism)
            return
        if mechanism.upper() not in SASL_MECHANISMS:
            self.problem(
                "sasl.mechanism",
                f"Invalid value {mechanism} for configuration sasl.mechanism: "
                f"librdkafka supports {', '.join(SASL_MECHANISMS)}",
            )
            return
        self.put("sasl.mechanism", mechanism.upper())

    def endpoint_identification(self) -> None:
        algorithm = self.value("ssl.endpoint.identification.algorithm")
        if algorithm is None:
            return
        if algorithm.lower() not in ("https", "", "none"):
            self.problem(
                "ssl.endpoint.identification.algorithm",
                f"Invalid value {algorithm} for configuration ssl.endpoint.identification.algorithm: "
                "use https (verify the broker's host name) or an empty value (do not)",
            )
            return
        self.put("ssl.endpoint.identification.algorithm", "https" if algorithm.lower() == "https" else "none")

    def jaas(self) -> None:
        line = self.value("sasl.jaas.config")
        if line is None:
            return
        key = "sasl.jaas.config"
        parsed = _parse_jaas(line)
        if parsed is None:
            # Never echo the line: it holds the password.
            self.problem(
                key,
                f'{key} cannot be parsed: expected \'<LoginModule class> required option="value" '
                "...;' (one login module)",
            )
            return
        module, options = parsed
        mechanisms = _MODULE_MECHANISMS.get(module)
        if mechanisms is None:
            self.problem(
                key,
                f"{key} uses login module {module}, which librdkafka cannot use: use "
                f"{PLAIN_MODULE}, {SCRAM_MODULE}, {OAUTH_MODULE} or {KERBEROS_MODULE}",
            )
            return
        mechanism = (self.value("sasl.mechanism") or "").upper()
        if mechanism and mechanism not in mechanisms:
            self.problem(
                key,
                f"{key} uses {module.rsplit('.', 1)[1]}, which does not go with "
                f"sasl.mechanism={mechanism} (use {' or '.join(mechanisms)})",
            )
            return
        if not mechanism:
            if len(mechanisms) > 1:
                self.problem(
                    "sasl.mechanism",
                    f"{key} uses {module.rsplit('.', 1)[1]}: set sasl.mechanism to {' or '.join(mechanisms)}",
                )
                return
            self.inferred_mechanism = mechanisms[0]
        if module in (PLAIN_MODULE, SCRAM_MODULE):
            self._user_password(key, module, options)
        elif module == OAUTH_MODULE:
            self._oauthbearer(key, options)
        else:
            self._kerberos(key, options)

    def _unknown_options(self, key: str, module: str, options: Mapping[str, str], known: set[str]) -> bool:
        unknown = sorted(o for o in options if o not in known and not o.startswith("extension_"))
        if unknown:
            self.problem(
                key,
                f"{key}: option(s) {', '.join(unknown)} of {module.rsplit('.', 1)[1]} have no librdkafka equivalent",
            )
        return bool(unknown)

    def _user_password(self, key: str, module: str, options: Mapping[str, str]) -> None:
        if self._unknown_options(key, module, options, {"username", "password"}):
            return
        if "username" not in options or "password" not in options:
            self.problem(key, f'{key}: {module.rsplit(".", 1)[1]} needs username="…" and password="…"')
            return
        self.put("sasl.username", options["username"])
        self.put("sasl.password", Secret(options["password"]))

    def _oauthbearer(self, key: str, options: Mapping[str, str]) -> None:
        known = {
            "clientId",
            "clientSecret",
            "scope",
            "unsecuredLoginStringClaim_sub",
            "unsecuredLoginLifetimeSeconds",
            "unsecuredLoginListClaim_scope",
        }
        if self._unknown_options(key, OAUTH_MODULE, options, known):
            return
        extensions = [
            f"{name[len('extension_') :]}={value}" for name, value in options.items() if name.startswith("extension_")
        ]
        if extensions:
            self.put("sasl.oauthbearer.extensions", ",".join(extensions))
        if "clientId" in options:  # OIDC client credentials (KIP-768)
            if not self.value("sasl.oauthbearer.token.endpoint.url"):
                self.problem(
                    "sasl.oauthbearer.token.endpoint.url",
                    f"{key} with clientId (OIDC) needs sasl.oauthbearer.token.endpoint.url",
                )
                return
            self.put("sasl.oauthbearer.method", "oidc")
            self.put("sasl.oauthbearer.client.id", options["clientId"])
            if "clientSecret" in options:
                self.put("sasl.oauthbearer.client.secret", Secret(options["clientSecret"]))
            if "scope" in options:
                self.put("sasl.oauthbearer.scope", options["scope"])
        elif "unsecuredLoginStringClaim_sub" in options:  # unsecured JWTs, for development only
            config = [f"principal={options['unsecuredLoginStringClaim_sub']}"]
            if "unsecuredLoginLifetimeSeconds" in options:
                config.append(f"lifeSeconds={options['unsecuredLoginLifetimeSeconds']}")
            if "unsecuredLoginListClaim_scope" in options:
                config.append(f"scope={options['unsecuredLoginListClaim_scope']}")
            self.put("enable.sasl.oauthbearer.unsecure.jwt", "true")
            self.put("sasl.oauthbearer.config", Secret(" ".join(config)))
        else:
            self.problem(
                key,
                f"{key}: OAuthBearerLoginModule needs clientId/clientSecret (OIDC, with "
                "sasl.oauthbearer.token.endpoint.url) or unsecuredLoginStringClaim_sub; a Java "
                "login callback handler cannot be used",
            )

    def _kerberos(self, key: str, options: Mapping[str, str]) -> None:
        known = {
            "principal",
            "keyTab",
            "serviceName",
            "useKeyTab",
            "storeKey",
            "doNotPrompt",
            "useTicketCache",
            "debug",
            "renewTGT",
            "refreshKrb5Config",
            "isInitiator",
        }
        if self._unknown_options(key, KERBEROS_MODULE, options, known):
            return
        for option, target in (
            ("principal", "sasl.kerberos.principal"),
            ("keyTab", "sasl.kerberos.keytab"),
            ("serviceName", "sasl.kerberos.service.name"),
        ):
            if option in options and target not in self.out:
                self.put(target, options[option])

    def truststore(self) -> None:
        location = self.value("ssl.truststore.location")
        certificates = self.value("ssl.truststore.certificates")
        if location is None and certificates is None:
            return
        store_type = _store_type(self.value("ssl.truststore.type"), location)
        key = "ssl.truststore.type" if self.value("ssl.truststore.type") else "ssl.truststore.location"
        if store_type in ("JKS", "PKCS12") and location is not None:
            self.java_truststore(location, store_type)
            return
        if store_type != "PEM":
            self.problem(key, f"Unsupported truststore type {store_type}: use JKS, PKCS12 or PEM")
            return
        if location is not None:
            self.put("ssl.ca.location", location)
        if certificates is not None:
            self.put("ssl.ca.pem", certificates)

    def java_truststore(self, location: str, store_type: str) -> None:
        """librdkafka cannot read a Java store: its certificates go inline (``ssl.ca.pem``), read here."""
        try:
            with open(location, "rb") as store:
                data = store.read()
        except OSError as exc:
            self.problem(
                "ssl.truststore.location", f"Cannot read the {store_type} truststore {location}: {exc.strerror}"
            )
            return
        try:
            self.put("ssl.ca.pem", truststore_pem(data, store_type, self.value("ssl.truststore.password")))
        except TruststoreError as exc:
            key = "ssl.truststore.password" if exc.wrong_password else "ssl.truststore.location"
            self.problem(key, f"The {store_type} truststore {location} cannot be read: {exc}")

    def keystore(self) -> None:
        location = self.value("ssl.keystore.location")
        inline_key = self.value("ssl.keystore.key")
        if location is None and inline_key is None:
            return
        store_type = _store_type(self.value("ssl.keystore.type"), location)
        key = "ssl.keystore.type" if self.value("ssl.keystore.type") else "ssl.keystore.location"
        if store_type == "PKCS12":
            if location is not None:
                self.put("ssl.keystore.location", location)
            if self.value("ssl.keystore.password") is not None:
                self.put("ssl.keystore.password", self.settings["ssl.keystore.password"])
        elif store_type == "PEM":
            if location is not None:  # one PEM file with the private key and the certificate chain
                self.put("ssl.key.location", location)
                self.put("ssl.certificate.location", location)
            if inline_key is not None:
                self.put("ssl.key.pem", self.settings["ssl.keystore.key"])
            chain = self.value("ssl.keystore.certificate.chain")
            if chain is not None:
                self.put("ssl.certificate.pem", chain)
        else:
            self.problem(
                key,
                f"librdkafka cannot read a {store_type} keystore"
                f"{' (JKS is the Java default for ssl.keystore.type)' if store_type == 'JKS' else ''}"
                ": convert it to PKCS12 (keytool -importkeystore -deststoretype PKCS12) and set "
                "ssl.keystore.type=PKCS12, or use PEM files with ssl.certificate.location and "
                "ssl.key.location",
            )


def _store_type(declared: str | None, location: str | None) -> str:
    """A store's type: as declared, else from the file name, else Java's default (JKS)."""
    if declared:
        return declared.upper()
    name = (location or "").lower()
    if name.endswith((".p12", ".pfx", ".pkcs12")):
        return "PKCS12"
    if name.endswith((".pem", ".crt", ".cer")) or location is None:
        return "PEM"
    return "JKS"


def _parse_jaas(line: str) -> tuple[str, dict[str, str]] | None:
    match = _JAAS_LINE.match(line)
    if match is None:
        return None
    module, _flag, rest = match.groups()
    options: dict[str, str] = {}
    position = 0
    rest = rest.rstrip().rstrip(";")
    while position < len(rest.rstrip()):
        option = _JAAS_OPTION.match(rest, position)
        if option is None:
            return None
        name, quoted, bare = option.groups()
        options[name] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        position = option.end()
    return module, options


def librdkafka_security(settings: Mapping[str, str | Secret]) -> tuple[dict[str, str | Secret], list[SecurityProblem]]:
    """librdkafka settings for ``settings`` (security keys in Java or librdkafka naming, precedence already
    applied), and the problems found. Secret values come back as ``Secret``."""
    mapper = _Mapper(settings)
    mapper.run()
    return mapper.out, mapper.problems
