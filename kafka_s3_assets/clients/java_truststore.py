"""The certificates of a Java truststore (JKS or PKCS12), as PEM for librdkafka's ``ssl.ca.pem``.

Connect configs name their CA as a Java truststore (``ssl.truststore.location``, JKS by default, PKCS12
since Java 9's default), which librdkafka cannot read. The store is read here instead, once, where the
settings are resolved, and its certificates travel inline to every consumer (Spark executors need no copy
of the file). What is trusted is what Java's trust manager trusts: every trusted-certificate entry, and
the first certificate of each private-key entry.

JKS layout (``sun.security.provider.JavaKeyStore``): magic ``FEEDFEED``, version 1 or 2, the entry count,
then per entry a tag (1: private key, 2: trusted certificate), a modified-UTF-8 alias, a timestamp, and
the entry; the store ends with a SHA-1 over the password (UTF-16BE), the words "Mighty Aphrodite" and all
bytes before it. Java checks that digest only when a password is given; so does this reader.
"""

from __future__ import annotations

import hashlib
import hmac
import struct

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, pkcs12

_JKS_MAGIC = 0xFEEDFEED
_JCEKS_MAGIC = 0xCECECECE
_PRIVATE_KEY_ENTRY = 1
_TRUSTED_CERT_ENTRY = 2
_DIGEST_WHITENER = b"Mighty Aphrodite"


class TruststoreError(ValueError):
    """A store that cannot be read; ``wrong_password`` when its integrity check failed."""

    def __init__(self, message: str, *, wrong_password: bool = False):
        super().__init__(message)
        self.wrong_password = wrong_password


def truststore_pem(data: bytes, store_type: str, password: str | None) -> str:
    """The trusted certificates of a ``JKS`` or ``PKCS12`` store, concatenated PEM."""
    certificates = _jks_certificates(data, password) if store_type == "JKS" else _pkcs12_certificates(data, password)
    if not certificates:
        raise TruststoreError("it holds no certificate")
    return "".join(certificate.public_bytes(Encoding.PEM).decode("ascii") for certificate in certificates)


def _pkcs12_certificates(data: bytes, password: str | None) -> list[x509.Certificate]:
    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError as exc:
        # cryptography (OpenSSL) cannot tell a wrong password from a damaged file.
        raise TruststoreError(f"it does not open as PKCS12 with this password ({exc})", wrong_password=True) from None
    certificates = [store.cert.certificate] if store.cert is not None else []
    return certificates + [c.certificate for c in store.additional_certs]


def _jks_certificates(data: bytes, password: str | None) -> list[x509.Certificate]:
    reader = _Reader(data)
    magic, version, count = reader.unpack(">III")
    if magic == _JCEKS_MAGIC:
        raise TruststoreError("it is a JCEKS store: convert it to PKCS12 or PEM (keytool -importkeystore)")
    if magic != _JKS_MAGIC or version not in (1, 2):
        raise TruststoreError("it is not a JKS store (no JKS header)")
    certificates = []
    for _ in range(count):
        (tag,) = reader.unpack(">I")
        reader.utf()  # alias
        reader.unpack(">q")  # creation time
        if tag == _PRIVATE_KEY_ENTRY:
            reader.block()  # the encrypted key
            (chain_length,) = reader.unpack(">I")
            chain = [reader.certificate(version) for _ in range(chain_length)]
            certificates.extend(chain[:1])
        elif tag == _TRUSTED_CERT_ENTRY:
            certificates.append(reader.certificate(version))
        else:
            raise TruststoreError(f"it holds an entry of unknown kind {tag}")
    body = data[: reader.position]
    digest = data[reader.position : reader.position + 20]
    if len(digest) != 20:
        raise TruststoreError("it is cut short (no integrity digest)")
    if password is not None:
        expected = hashlib.sha1(password.encode("utf-16-be") + _DIGEST_WHITENER + body).digest()
        if not hmac.compare_digest(expected, digest):
            raise TruststoreError("its integrity check fails with this password", wrong_password=True)
    return [x509.load_der_x509_certificate(der) for der in certificates]


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.position = 0

    def take(self, size: int) -> bytes:
        if self.position + size > len(self.data):
            raise TruststoreError("it is cut short")
        chunk = self.data[self.position : self.position + size]
        self.position += size
        return chunk

    def unpack(self, layout: str) -> tuple:
        return struct.unpack(layout, self.take(struct.calcsize(layout)))

    def utf(self) -> bytes:
        (length,) = self.unpack(">H")
        return self.take(length)

    def block(self) -> bytes:
        (length,) = self.unpack(">I")
        return self.take(length)

    def certificate(self, version: int) -> bytes:
        if version == 2:
            kind = self.utf()
            if kind != b"X.509":
                raise TruststoreError(f"it holds a {kind.decode(errors='replace')} certificate, not X.509")
        return self.block()
