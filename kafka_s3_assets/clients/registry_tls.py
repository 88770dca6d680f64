"""The schema registry client's TLS settings as Confluent's converters take them: Kafka's client SSL configs
under ``schema.registry.ssl.`` (``truststore.*``, ``keystore.*``, ``key.password``), turned into what
confluent-kafka's client loads (a CA bundle, a client certificate and key, as PEM).

Confluent's client builds its SSL context from these with Kafka's ``SslFactory``: a truststore of type
JKS (Java's default), PKCS12 or PEM (a file, or ``truststore.certificates`` inline), a keystore of type
PKCS12, PEM (one file with the private key and the certificate chain, or ``keystore.key`` and
``keystore.certificate.chain`` inline) or JKS. Java stores are read here, where the settings are read
(the driver), so the Spark tasks get the certificates inline and need no copy of the files; a JKS
keystore cannot be read (its keys are sealed with Sun's proprietary algorithm) and is refused with the
way out. A store's type, when not set, is taken from the file name, else JKS, as in
:mod:`kafka_security` for the Kafka clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    pkcs12,
)

from .java_truststore import TruststoreError, truststore_pem

PREFIX = "schema.registry.ssl."


class TlsSettingError(ValueError):
    """A TLS setting that cannot work; ``setting`` names it (without the converter prefix)."""

    def __init__(self, setting: str, message: str):
        super().__init__(message)
        self.setting = setting


@dataclass(frozen=True)
class RegistryTls:
    """What the truststore and keystore settings come to (all None when none is set)."""

    ca_pem: str | None = None
    ca_location: str | None = None
    certificate_location: str | None = None  # a PEM file holding the key and the certificate chain
    certificate_pem: str | None = None
    key_pem: str | None = None
    key_password: str | None = None

    @property
    def has_client_certificate(self) -> bool:
        return self.certificate_location is not None or self.certificate_pem is not None


def registry_tls(settings: Mapping[str, Any]) -> RegistryTls:
    """The truststore and keystore of a converter's settings. Raises TlsSettingError naming the setting."""
    trust = _truststore(settings)
    key = _keystore(settings)
    return RegistryTls(
        ca_pem=trust.ca_pem,
        ca_location=trust.ca_location,
        certificate_location=key.certificate_location,
        certificate_pem=key.certificate_pem,
        key_pem=key.key_pem,
        key_password=key.key_password,
    )


def _value(settings: Mapping[str, Any], name: str) -> str | None:
    value = settings.get(PREFIX + name)
    return None if value is None or str(value) == "" else str(value)


def _store_type(declared: str | None, location: str | None) -> str:
    """A store's type: as declared, else from the file name, else Java's default (JKS)."""
    if declared:
        return declared.strip().upper()
    name = (location or "").lower()
    if name.endswith((".p12", ".pfx", ".pkcs12")):
        return "PKCS12"
    if name.endswith((".pem", ".crt", ".cer")) or location is None:
        return "PEM"
    return "JKS"


def _read(location: str, setting: str, what: str) -> bytes:
    try:
        with open(location, "rb") as store:
            return store.read()
    except OSError as exc:
        raise TlsSettingError(setting, f"Cannot read the {what} {location}: {exc.strerror}") from None


def _truststore(settings: Mapping[str, Any]) -> RegistryTls:
    location = _value(settings, "truststore.location")
    certificates = _value(settings, "truststore.certificates")
    if location is None and certificates is None:
        return RegistryTls()
    declared = _value(settings, "truststore.type")
    store_type = _store_type(declared, location)
    key = PREFIX + ("truststore.type" if declared else "truststore.location")
    if store_type in ("JKS", "PKCS12") and location is not None:
        data = _read(location, PREFIX + "truststore.location", f"{store_type} truststore")
        try:
            return RegistryTls(ca_pem=truststore_pem(data, store_type, _value(settings, "truststore.password")))
        except TruststoreError as exc:
            setting = PREFIX + ("truststore.password" if exc.wrong_password else "truststore.location")
            raise TlsSettingError(setting, f"The {store_type} truststore {location} cannot be read: {exc}") from None
    if store_type != "PEM":
        raise TlsSettingError(key, f"Unsupported truststore type {store_type}: use JKS, PKCS12 or PEM")
    if location is not None and certificates is not None:
        raise TlsSettingError(
            PREFIX + "truststore.certificates",
            f"Set one of {PREFIX}truststore.location and {PREFIX}truststore.certificates",
        )
    return RegistryTls(ca_pem=certificates, ca_location=location)


def _keystore(settings: Mapping[str, Any]) -> RegistryTls:
    location = _value(settings, "keystore.location")
    inline_key = _value(settings, "keystore.key")
    chain = _value(settings, "keystore.certificate.chain")
    key_password = _value(settings, "key.password")
    if location is None and inline_key is None and chain is None:
        return RegistryTls()
    declared = _value(settings, "keystore.type")
    store_type = _store_type(declared, location)
    key = PREFIX + ("keystore.type" if declared else "keystore.location")
    if store_type == "PKCS12" and location is not None:
        return _pkcs12_keystore(location, _value(settings, "keystore.password"))
    if store_type == "PEM":
        if location is not None:
            return RegistryTls(certificate_location=location, key_password=key_password)
        if inline_key is None or chain is None:
            missing = "keystore.key" if inline_key is None else "keystore.certificate.chain"
            raise TlsSettingError(
                PREFIX + missing,
                f"A PEM keystore given inline needs both {PREFIX}keystore.key and {PREFIX}keystore.certificate.chain",
            )
        return RegistryTls(certificate_pem=chain, key_pem=inline_key, key_password=key_password)
    raise TlsSettingError(
        key,
        f"A {store_type} keystore cannot be read here"
        f"{' (JKS is the Java default for keystore.type)' if store_type == 'JKS' else ''}: convert it to PKCS12 "
        f"(keytool -importkeystore -deststoretype PKCS12) and set {PREFIX}keystore.type=PKCS12, or use PEM "
        f"({PREFIX}keystore.type=PEM)",
    )


def _pkcs12_keystore(location: str, password: str | None) -> RegistryTls:
    data = _read(location, PREFIX + "keystore.location", "PKCS12 keystore")
    try:
        key, certificate, others = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError as exc:  # OpenSSL cannot tell a wrong password from a damaged file
        raise TlsSettingError(
            PREFIX + "keystore.password",
            f"The PKCS12 keystore {location} does not open with this password ({exc})",
        ) from None
    if key is None or certificate is None:
        raise TlsSettingError(
            PREFIX + "keystore.location", f"The PKCS12 keystore {location} holds no private key and certificate"
        )
    key_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode("ascii")
    chain = "".join(c.public_bytes(Encoding.PEM).decode("ascii") for c in [certificate, *others])
    return RegistryTls(certificate_pem=chain, key_pem=key_pem)
