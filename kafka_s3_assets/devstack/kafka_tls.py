"""TLS material of the devstack's broker: a CA of its own, the broker's certificate, a client certificate.

The broker's SSL listeners read their keystore as one PEM file (Kafka's ``ssl.keystore.type=PEM``: the
private key in PKCS#8, then the certificate chain), so no ``keytool`` run is needed. Clients trust the CA's
PEM file (``ssl.ca.location`` in librdkafka, ``ssl.truststore.type=PEM`` + ``ssl.truststore.location`` in a
Connect config). The client certificate (signed by the same CA) is for the mutual-TLS listener, which
requires one. The certificates name ``localhost`` and ``127.0.0.1``, so hostname verification passes.

Everything is made once per state directory and kept: a restarted broker serves the same certificate, so
a client's truststore stays valid across restarts.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = datetime.timedelta(days=3650)


@dataclass(frozen=True)
class TlsFiles:
    ca_certificate: Path  # the CA, PEM: what clients trust
    broker_keystore: Path  # the broker's PKCS#8 key and certificate chain, PEM (ssl.keystore.type=PEM)
    client_certificate: Path  # a client's certificate chain, PEM, for mutual TLS
    client_key: Path  # its unencrypted PKCS#8 key, PEM

    def exist(self) -> bool:
        return all(
            p.exists() for p in (self.ca_certificate, self.broker_keystore, self.client_certificate, self.client_key)
        )


def tls_files(directory: Path) -> TlsFiles:
    return TlsFiles(
        ca_certificate=directory / "ca.pem",
        broker_keystore=directory / "broker-keystore.pem",
        client_certificate=directory / "client.pem",
        client_key=directory / "client-key.pem",
    )


def ensure_tls_files(directory: Path) -> TlsFiles:
    """The CA and certificates in ``directory``, made when missing."""
    files = tls_files(directory)
    if files.exist():
        return files
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kafka-s3-assets devstack CA")])
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key(), now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )  # keyCertSign, cRLSign
        .sign(ca_key, hashes.SHA256())
    )
    broker_key, broker = _leaf("localhost", ca_name, ca_key, now, ExtendedKeyUsageOID.SERVER_AUTH)
    client_key, client = _leaf("devstack-client", ca_name, ca_key, now, ExtendedKeyUsageOID.CLIENT_AUTH)
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    _write_private(files.broker_keystore, _pkcs8(broker_key) + broker.public_bytes(serialization.Encoding.PEM) + ca_pem)
    _write_private(files.client_key, _pkcs8(client_key))
    files.client_certificate.write_bytes(client.public_bytes(serialization.Encoding.PEM) + ca_pem)
    files.ca_certificate.write_bytes(ca_pem)  # last: its presence with the others means complete
    return files


def _builder(subject: x509.Name, issuer: x509.Name, public_key, now: datetime.datetime) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + _VALIDITY)
    )


def _leaf(common_name, ca_name, ca_key, now, usage) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        _builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]), ca_name, key.public_key(), now)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, certificate


def _pkcs8(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _write_private(path: Path, data: bytes) -> None:
    path.touch(mode=0o600, exist_ok=True)
    path.write_bytes(data)
