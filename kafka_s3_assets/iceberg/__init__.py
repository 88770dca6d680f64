"""The Iceberg table over a connector's Parquet exports (``kafka_s3_assets.iceberg.*``; docs/iceberg.md).

The Parquet objects an export committed are registered, where they are, as the data files of one table
per topic; nothing is copied or rewritten. The manifests stay the source of truth: the table records in
its snapshot summary how far it has registered each topic-partition (``registered``), and ``sync`` adds
every manifest after that, in order, in one commit per table, from the driver of an export run, the
export sensor or ``kafka-s3-assets table sync``. ``settings`` (what the config asks for), ``catalog``
(opening the catalog, creating the table), ``schema`` (the files' schema as the table's), ``partitioning``
(which partition transform the connector's partitioner allows), ``data_files`` (an object as a data file,
from its footer).

At the export layer: it reads manifests through ``export`` and reaches S3 through ``clients``; Spark tasks
never import it.
"""
