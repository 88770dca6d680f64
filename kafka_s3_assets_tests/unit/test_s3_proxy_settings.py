"""``s3.proxy.url`` / ``s3.proxy.user`` / ``s3.proxy.password``: parsed as the reference's S3ProxyConfig
reads them, refused with the key named when the URL is unusable, handed to botocore so that it sends the
credentials, and the password never printed. (The requests really going through a proxy:
integration/test_s3_proxy_export.py.)"""

from __future__ import annotations

import base64
import logging
import pickle

import pytest
from botocore.exceptions import ClientError, ProxyConnectionError
from botocore.httpsession import ProxyConfiguration

from kafka_s3_assets.clients.s3 import S3Settings, proxy_hint
from kafka_s3_assets.export.s3_settings import S3Deployment, resolve_s3_settings
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.config_keys import ALL_KEYS, Support, Type
from kafka_s3_assets.sink.config_providers import resolve_config_providers
from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.s3_proxy import S3Proxy, parse_proxy_url, s3_proxy
from kafka_s3_assets.sink.secrets import Secret, scrub

from .sink_helpers import base_config

pytestmark = [pytest.mark.unit]

PASSWORD = "SENTINEL-proxy-p@ss:w/rd?%41 #"  # characters a URL could trip on
URL_PASSWORD = "SENTINEL-url-password"


def settings_of(env: dict[str, str] | None = None, **keys) -> tuple[S3Settings, list]:
    config = validate_connector_config(base_config(**keys))
    return resolve_s3_settings(config, env or {}, None, S3Deployment())


def proxy_problems(url: str) -> dict[str, str]:
    with pytest.raises(ConfigError) as raised:
        validate_connector_config(base_config(**{"s3.proxy.url": url}))
    return {p.key: p.message for p in raised.value.problems}


def sent_credentials(proxy: S3Proxy) -> tuple[str, str] | None:
    """(user, password) of the Proxy-Authorization header botocore builds from what it is given."""
    headers = ProxyConfiguration(proxies=proxy.botocore_proxies()).proxy_headers_for(proxy.botocore_url())
    if "Proxy-Authorization" not in headers:
        return None
    scheme, encoded = headers["Proxy-Authorization"].split(" ", 1)
    assert scheme == "Basic"
    user, _, password = base64.b64decode(encoded).decode("ascii").partition(":")
    return user, password


def test_the_five_keys_are_fully_supported_with_the_reference_defaults_and_types():
    expected = {
        "s3.proxy.url": (Type.STRING, ""),
        "s3.proxy.user": (Type.STRING, None),
        "s3.proxy.password": (Type.PASSWORD, None),
        "s3.wan.mode": (Type.BOOLEAN, False),
        "s3.send.digest": (Type.BOOLEAN, False),
    }
    for name, (type_, default) in expected.items():
        key = ALL_KEYS[name]
        assert (key.type, key.default, key.support) == (type_, default, Support.FULL), name
        assert key.doc, name
    config = validate_connector_config(base_config())
    assert {name: config[name] for name in expected} == {name: default for name, (_, default) in expected.items()}


def test_without_a_proxy_url_there_is_no_proxy_even_with_credentials():
    settings, problems = settings_of()
    assert problems == [] and settings.proxy is None
    assert settings.client().meta.config.proxies is None  # botocore's own choice ($HTTPS_PROXY, ...) stays
    settings, problems = settings_of(**{"s3.proxy.url": "   ", "s3.proxy.user": "u", "s3.proxy.password": "p"})
    assert problems == [] and settings.proxy is None


@pytest.mark.parametrize(
    ("url", "scheme", "host", "port"),
    [
        ("http://proxy.example.com:3128", "http", "proxy.example.com", 3128),
        ("http://proxy.example.com", "http", "proxy.example.com", 80),
        ("https://proxy.example.com", "https", "proxy.example.com", 443),
        ("HTTPS://Proxy.Example.com:8443/some/path?q=1", "https", "proxy.example.com", 8443),
        ("  http://10.0.0.7:8080/  ", "http", "10.0.0.7", 8080),
        ("http://[::1]:3128", "http", "::1", 3128),
    ],
)
def test_the_url_gives_scheme_host_and_port_with_the_schemes_default_port(url, scheme, host, port):
    settings, problems = settings_of(**{"s3.proxy.url": url})
    assert problems == []
    proxy = settings.proxy
    assert (proxy.scheme, proxy.host, proxy.port) == (scheme, host, port)
    expected_address = f"{scheme}://{'[::1]' if host == '::1' else host}:{port}"
    assert proxy.address == expected_address
    assert not proxy.authenticates and sent_credentials(proxy) is None
    # Every request through it, whatever the endpoint's scheme; the path and query are not the proxy's.
    assert settings.client().meta.config.proxies == {"http": expected_address, "https": expected_address}


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("proxy.example.com:3128", "needs a scheme"),
        ("10.0.0.7:3128", "needs a scheme"),
        ("socks5://proxy.example.com:1080", "scheme must be http or https"),
        ("ftp://proxy.example.com", "scheme must be http or https"),
        ("http://:3128", "no valid proxy host"),
        ("http:///path", "no valid proxy host"),
        ("http://proxy.example.com:http", "'http' is not a number from 1 to 65535"),
        ("http://proxy.example.com:70000", "'70000' is not a number from 1 to 65535"),
        ("http://proxy.example.com:0", "0 is not a number from 1 to 65535"),
        ("http://[::1:3128", "not a URL"),
    ],
)
def test_an_unusable_url_is_a_config_error_naming_the_key(url, says):
    problems = proxy_problems(url)
    assert list(problems) == ["s3.proxy.url"]
    assert problems["s3.proxy.url"].startswith(f"Invalid value {url} for configuration s3.proxy.url: ")
    assert says in problems["s3.proxy.url"]


def test_an_unusable_url_never_shows_its_password_in_its_own_message():
    for url in (f"socks5://user:{URL_PASSWORD}@proxy:1080", f"http://user:{URL_PASSWORD}@proxy:notaport"):
        with pytest.raises(ValueError) as raised:
            parse_proxy_url(url)
        assert URL_PASSWORD not in str(raised.value)


def test_the_keys_credentials_are_sent_exactly_as_written():
    settings, problems = settings_of(
        **{"s3.proxy.url": "http://proxy:3128", "s3.proxy.user": "us@er/x%41", "s3.proxy.password": PASSWORD}
    )
    assert problems == []
    assert settings.proxy.authenticates
    assert sent_credentials(settings.proxy) == ("us@er/x%41", PASSWORD)
    assert isinstance(settings.proxy.password, Secret)


def test_credentials_in_the_url_are_used_where_the_keys_are_blank_as_the_reference_does():
    url = f"http://url-user:{URL_PASSWORD}@proxy:3128"
    assert sent_credentials(settings_of(**{"s3.proxy.url": url})[0].proxy) == ("url-user", URL_PASSWORD)
    # Each key wins over the URL on its own, and a blank key is no key.
    keys_user = settings_of(**{"s3.proxy.url": url, "s3.proxy.user": "key-user"})[0].proxy
    assert sent_credentials(keys_user) == ("key-user", URL_PASSWORD)
    keys_password = settings_of(**{"s3.proxy.url": url, "s3.proxy.password": PASSWORD, "s3.proxy.user": " "})[0]
    assert sent_credentials(keys_password.proxy) == ("url-user", PASSWORD)
    # The URL's proxy address never carries them.
    assert keys_password.proxy.address == "http://proxy:3128"


def test_credentials_basic_authentication_cannot_carry_are_config_errors_naming_their_key():
    _, problems = settings_of(**{"s3.proxy.url": "http://proxy:3128", "s3.proxy.user": "a:b", "s3.proxy.password": "p"})
    assert [(p.key, "must not contain ':'" in p.message) for p in problems] == [("s3.proxy.user", True)]
    _, problems = settings_of(
        **{"s3.proxy.url": "http://proxy:3128", "s3.proxy.user": "u", "s3.proxy.password": "pässe"}
    )
    assert [p.key for p in problems] == ["s3.proxy.password"]
    assert "outside ASCII" in problems[0].message and "pässe" not in problems[0].message
    _, problems = settings_of(**{"s3.proxy.url": "http://ü:secret@proxy:3128"})
    assert [p.key for p in problems] == ["s3.proxy.url"] and "proxy user" in problems[0].message


def test_a_user_without_a_password_sends_no_credentials_and_says_so(caplog):
    with caplog.at_level(logging.WARNING):
        settings, problems = settings_of(**{"s3.proxy.url": "http://proxy:3128", "s3.proxy.user": "lonely"})
    assert problems == []
    assert not settings.proxy.authenticates and sent_credentials(settings.proxy) is None
    assert settings.client().meta.config.proxies == {"http": "http://proxy:3128", "https": "http://proxy:3128"}
    assert "has a user but no password" in caplog.text and "http://proxy:3128" in caplog.text


def test_the_password_is_never_printed_but_is_a_secret_to_scrub(caplog):
    with caplog.at_level(logging.DEBUG):
        settings, _ = settings_of(
            **{"s3.proxy.url": f"http://url-user:{URL_PASSWORD}@proxy:3128", "s3.proxy.password": PASSWORD}
        )
        from_url, _ = settings_of(**{"s3.proxy.url": f"http://url-user:{URL_PASSWORD}@proxy:3128"})
    config = validate_connector_config(base_config(**{"s3.proxy.password": PASSWORD}))
    shown = [
        repr(settings),
        str(settings),
        repr(settings.proxy),
        str(settings.proxy),
        f"{settings.proxy.password}",
        repr(from_url.proxy),
        repr(parse_proxy_url(f"http://u:{URL_PASSWORD}@proxy")),
        repr(config),
        str(config.redacted()),
        caplog.text,
    ]
    for text in shown:
        assert PASSWORD not in text and URL_PASSWORD not in text, text
    assert "proxy='http://proxy:3128'" in repr(settings)
    # What a client library might put in a message is scrubbed at the boundaries, and the settings pickle
    # (to Spark tasks) with the secret intact.
    assert PASSWORD in settings.secrets() and URL_PASSWORD in from_url.secrets()
    assert (
        scrub(f"failed: {PASSWORD} and {URL_PASSWORD}", settings.secrets() + from_url.secrets()).count("[hidden]") == 2
    )
    shipped = pickle.loads(pickle.dumps(settings))
    assert shipped.proxy == settings.proxy and sent_credentials(shipped.proxy) == ("url-user", PASSWORD)


def test_a_password_resolved_by_a_config_provider_is_never_shown(tmp_path):
    (tmp_path / "proxy").write_text(PASSWORD)
    raw = base_config(
        **{
            "s3.proxy.url": "http://proxy:3128",
            "s3.proxy.user": "u",
            "s3.proxy.password": f"${{directory:{tmp_path}:proxy}}",
        }
    )
    config = validate_connector_config(resolve_config_providers(raw, {}))
    settings, problems = resolve_s3_settings(config, {}, None, S3Deployment())
    assert problems == [] and sent_credentials(settings.proxy) == ("u", PASSWORD)
    assert PASSWORD not in repr(config) and PASSWORD not in repr(settings)


def test_a_proxy_refusing_the_credentials_is_named_with_the_keys_to_check():
    proxy = S3Proxy("http", "proxy", 3128, "u", PASSWORD)
    with_proxy = S3Settings(bucket="b", region="us-east-1", proxy=proxy)
    answered_407 = ClientError(
        {
            "Error": {"Code": "407", "Message": "Proxy Authentication Required"},
            "ResponseMetadata": {"HTTPStatusCode": 407},
        },
        "HeadBucket",
    )
    tunnel_refused = ProxyConnectionError(
        proxy_url="http://***:***@proxy:3128", error="Tunnel connection failed: 407 Proxy Authentication Required"
    )
    for exc in (answered_407, tunnel_refused):
        hint = proxy_hint(with_proxy, exc)
        assert "407" in hint and "http://proxy:3128" in hint and "s3.proxy.user and s3.proxy.password" in hint
        assert "were refused" in hint and PASSWORD not in hint
    no_credentials = S3Settings(bucket="b", region="us-east-1", proxy=S3Proxy("http", "proxy", 3128))
    assert "none are set" in proxy_hint(no_credentials, answered_407)
    # Nothing to say without a proxy, or about another failure.
    assert proxy_hint(S3Settings(bucket="b", region="us-east-1"), answered_407) == ""
    refused = ProxyConnectionError(proxy_url="http://proxy:3128", error="Connection refused")
    assert proxy_hint(with_proxy, refused) == ""


def test_direct_construction_wraps_a_plain_password():
    proxy = s3_proxy("http://proxy:3128", "u", PASSWORD)
    assert isinstance(proxy.password, Secret)
    assert isinstance(S3Proxy("http", "proxy", 3128, "u", PASSWORD).password, Secret)
    assert s3_proxy("", "u", PASSWORD) is None and s3_proxy(None, None, None) is None
