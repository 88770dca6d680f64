"""``s3.proxy.url``, ``s3.proxy.user``, ``s3.proxy.password``: the HTTP proxy S3 requests go through.

As the reference connector's ``S3ProxyConfig`` reads them: the URL gives the proxy's scheme (``http``, else
``https``: the protocol spoken *to the proxy*), host and port (the scheme's default, 80 or 443, when it
names none); its path and query are ignored. A blank URL means no proxy. The credentials are
``s3.proxy.user`` and ``s3.proxy.password``, each, when blank, taken from the URL's userinfo
(``http://user:password@host:port``) as the reference does; they are sent (``Proxy-Authorization: Basic``)
only when both are set, as the AWS SDK's Apache client sends them. ``s3.proxy.password`` is a PASSWORD
key and a password found in the URL is kept as a :class:`~.secrets.Secret` too: neither is ever printed
(the reference's documentation recommends the two keys over credentials in the URL, which Kafka Connect
shows as it shows any STRING value).

The proxy carries every request of the S3 client, whatever the S3 endpoint (a loopback endpoint
included: ``$NO_PROXY`` does not apply to a proxy set here, nor do ``$HTTP_PROXY``/``$HTTPS_PROXY``), as
the reference's client does; it does not carry the STS requests of the assume-role credentials provider,
which has a client of its own there too.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from .secrets import Secret, reveal

PROXY_URL_KEY = "s3.proxy.url"
PROXY_USER_KEY = "s3.proxy.user"
PROXY_PASSWORD_KEY = "s3.proxy.password"

DEFAULT_PORTS = {"http": 80, "https": 443}
_EXAMPLE = "e.g. http://proxy.example.com:3128"


class ProxyUrlError(ValueError):
    """``s3.proxy.url`` is no usable proxy URL; the message never holds the URL's password."""


@dataclass(frozen=True)
class ProxyUrl:
    """What ``s3.proxy.url`` says: where the proxy is, and the userinfo written in it (if any)."""

    scheme: str
    host: str
    port: int
    user: str | None = None
    password: Secret | None = None

    def __repr__(self) -> str:
        return f"ProxyUrl({address(self.scheme, self.host, self.port)!r})"


def address(scheme: str, host: str, port: int) -> str:
    """``scheme://host:port``, an IPv6 host in brackets."""
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def parse_proxy_url(text: str) -> ProxyUrl:
    """Parse ``s3.proxy.url`` (not blank). Raises ProxyUrlError saying what is wrong, never the password."""
    text = text.strip()  # java.net.URL ignores leading and trailing whitespace
    if "://" not in text:
        raise ProxyUrlError(f"not a URL: it needs a scheme, http:// or https:// ({_EXAMPLE})")
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # e.g. an unbalanced IPv6 bracket
        raise ProxyUrlError(f"not a URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ProxyUrlError(
            f"the scheme must be http or https (the protocol spoken to the proxy), not {parts.scheme!r} ({_EXAMPLE})"
        )
    host = parts.hostname or ""
    if not host or any(c.isspace() or c in "/\\?#@" for c in host):
        raise ProxyUrlError(f"the URL names no valid proxy host ({_EXAMPLE})")
    if ":" in host:
        try:
            ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            raise ProxyUrlError(f"the URL names no valid proxy host ({_EXAMPLE})") from None
    try:
        port = parts.port
    except ValueError:
        port_text = parts.netloc.rpartition("@")[2].rpartition(":")[2]
        raise ProxyUrlError(f"the port {port_text!r} is not a number from 1 to 65535") from None
    if port == 0:
        raise ProxyUrlError("the port 0 is not a number from 1 to 65535")
    # Userinfo as java.net.URL gives it (not percent-decoded), split at the first ':' as the reference does.
    user = parts.username or None
    password = parts.password
    return ProxyUrl(
        scheme,
        host,
        port or DEFAULT_PORTS[scheme],
        user,
        Secret(password) if password else None,
    )


def proxy_url_problem(_key: str, value: object) -> str | None:
    """The ``s3.proxy.url`` validator: None when blank (no proxy) or a usable proxy URL."""
    if value is None or not str(value).strip():
        return None
    try:
        parse_proxy_url(str(value))
    except ProxyUrlError as exc:
        return str(exc)
    return None


def _blank(value: object) -> bool:
    return value is None or not str(reveal(value)).strip()


@dataclass(frozen=True)
class S3Proxy:
    """The proxy the S3 client goes through, with the credentials it is sent (both, or neither)."""

    scheme: str
    host: str
    port: int
    user: str | None = None
    password: Secret | None = None  # a plain str is wrapped: never printed

    def __post_init__(self) -> None:
        if self.password is not None and not isinstance(self.password, Secret):
            object.__setattr__(self, "password", Secret(self.password))

    @property
    def address(self) -> str:
        """``scheme://host:port``, without credentials: what messages show."""
        return address(self.scheme, self.host, self.port)

    @property
    def authenticates(self) -> bool:
        """Whether the proxy is sent credentials: only with both a user and a password, as the AWS SDK."""
        return not _blank(self.user) and not _blank(self.password)

    def botocore_url(self) -> str:
        """The proxy URL botocore takes (``Config(proxies=...)``): credentials percent-encoded in it, which
        botocore decodes and sends as ``Proxy-Authorization: Basic``. Holds the password: never print it."""
        if not self.authenticates:
            return self.address
        credentials = f"{quote(str(self.user), safe='')}:{quote(reveal(self.password), safe='')}"
        return self.address.replace("://", f"://{credentials}@", 1)

    def botocore_proxies(self) -> dict[str, str]:
        """Every request through the proxy, whatever the endpoint's scheme (https: a CONNECT tunnel)."""
        url = self.botocore_url()
        return {"http": url, "https": url}

    def secrets(self) -> list[str]:
        return [reveal(self.password)] if self.password else []

    def __repr__(self) -> str:
        return f"S3Proxy({self.address!r}, credentials={'set' if self.authenticates else 'none'})"


def s3_proxy(url: str | None, user: str | None, password: str | Secret | None) -> S3Proxy | None:
    """The proxy of ``s3.proxy.url`` / ``s3.proxy.user`` / ``s3.proxy.password``; None when the URL is blank.
    Raises ProxyUrlError for an unusable URL. A blank user or password is taken from the URL's userinfo."""
    if _blank(url):
        return None
    parsed = parse_proxy_url(str(url))
    chosen_user = parsed.user if _blank(user) else user
    chosen_password = parsed.password if _blank(password) else password
    return S3Proxy(
        parsed.scheme,
        parsed.host,
        parsed.port,
        chosen_user or None,
        Secret(reveal(chosen_password)) if chosen_password else None,
    )
