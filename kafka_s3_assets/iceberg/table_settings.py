"""What a connector config asks of its Iceberg table, resolved once on the driver: the catalog, the
table's name, where new table metadata goes, and how pyiceberg reaches the exported objects in S3.

Catalog properties, lowest precedence first: the S3 settings of the export (endpoint, region,
credentials: pyiceberg reads the Parquet footers and writes table metadata through them), then the
connector's ``kafka_s3_assets.iceberg.catalog.<property>`` keys as written (a REST catalog's ``token`` or
``credential``, a ``warehouse`` a REST catalog names, ``s3.*`` of other credentials, ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from ..clients.s3 import S3Settings
from ..sink.config import SinkConfig
from ..sink.config_keys import ICEBERG_CATALOG_URI
from ..sink.secret_keys import is_secret_catalog_property, url_password
from ..sink.secrets import reveal

# Where new tables' metadata goes when kafka_s3_assets.iceberg.warehouse is not set: beside the manifests
# (outside topics.dir, so no listing of exported objects sees it).
DEFAULT_WAREHOUSE_PREFIX = "_kafka_s3_assets/iceberg"


def default_table_name(topic: str) -> str:
    """The topic's name with characters outside ``[A-Za-z0-9_]`` as ``_`` (engines quote nothing then)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", topic)


def s3_io_properties(s3: S3Settings) -> dict[str, str]:
    """pyiceberg's S3 FileIO settings for the export's own S3 settings."""
    props = {"s3.region": s3.region}  # always: without it pyiceberg may ask AWS where the bucket is
    if s3.endpoint_url:
        props["s3.endpoint"] = s3.endpoint_url
    if s3.access_key_id and s3.secret_access_key:
        props["s3.access-key-id"] = s3.access_key_id
        props["s3.secret-access-key"] = reveal(s3.secret_access_key)
        if s3.session_token:
            props["s3.session-token"] = reveal(s3.session_token)
    if s3.unsigned:
        props["s3.anonymous"] = "true"
    if not s3.path_style:
        props["s3.force-virtual-addressing"] = "true"
    props["s3.connect-timeout"] = str(s3.connect_timeout_s)
    props["s3.request-timeout"] = str(s3.read_timeout_s)
    return props


def hide_password(url: str) -> str:
    """The URL with its password (if any) replaced, for messages and metadata."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":[hidden]@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


@dataclass(frozen=True)
class TableSettings:
    catalog_uri: str = field(repr=False)
    catalog_name: str
    namespace: str
    table: str
    warehouse: str  # a table created here lives at <warehouse>/<namespace>/<table>
    properties: Mapping[str, str] = field(repr=False, default_factory=dict)  # the catalog's, merged as above

    @property
    def is_rest(self) -> bool:
        return self.catalog_uri.lower().startswith(("http://", "https://"))

    @property
    def identifier(self) -> tuple[str, str]:
        return (self.namespace, self.table)

    @property
    def full_name(self) -> str:
        """``<catalog>.<namespace>.<table>``: Dagster's ``dagster/table_name``, and what engines query."""
        return f"{self.catalog_name}.{self.namespace}.{self.table}"

    @property
    def location(self) -> str:
        return f"{self.warehouse.rstrip('/')}/{self.namespace}/{self.table}"

    def secrets(self) -> list[str]:
        """Values never to print: credential properties and the URL's password."""
        found = [v for k, v in self.properties.items() if v and is_secret_catalog_property(k)]
        password = url_password(self.catalog_uri)
        return found + ([password] if password else [])

    def __repr__(self) -> str:
        return (
            f"TableSettings({self.full_name!r}, catalog={hide_password(self.catalog_uri)!r}, "
            f"warehouse={self.warehouse!r})"
        )


def table_full_name(config: SinkConfig, topic: str) -> str | None:
    """``<catalog>.<namespace>.<table>`` of ``topic``'s table, or None when the connector has none."""
    if config[ICEBERG_CATALOG_URI] is None:
        return None
    return (
        f"{config['kafka_s3_assets.iceberg.catalog.name']}.{config['kafka_s3_assets.iceberg.namespace']}."
        f"{config['kafka_s3_assets.iceberg.table'] or default_table_name(topic)}"
    )


def table_settings(config: SinkConfig, s3: S3Settings, topic: str) -> TableSettings | None:
    """The table of ``topic``'s exports, or None when the connector has no Iceberg table."""
    uri = config[ICEBERG_CATALOG_URI]
    if uri is None:
        return None
    warehouse = config["kafka_s3_assets.iceberg.warehouse"] or f"s3://{config.bucket}/{DEFAULT_WAREHOUSE_PREFIX}"
    properties = {**s3_io_properties(s3), **config.iceberg_catalog_properties}
    return TableSettings(
        catalog_uri=uri,
        catalog_name=config["kafka_s3_assets.iceberg.catalog.name"],
        namespace=config["kafka_s3_assets.iceberg.namespace"],
        table=config["kafka_s3_assets.iceberg.table"] or default_table_name(topic),
        warehouse=warehouse,
        properties=properties,
    )
