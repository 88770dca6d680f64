"""The columnar batch path: a batch of Avro datums of one schema decoded natively into Arrow columns,
converted to exactly the Arrow schema ParquetFormat writes (``formats.parquet_format.AvroToArrow``) and
appended to Parquet files as slices, without a Python object per record.

* ``reader_schema``: the writer schema rewritten into the schema the native decoder reads (raw logical
  types, maps as arrays of key/value records, ints read as longs, enums as their index);
* ``avro_decoder``: datums of one schema -> an Arrow table (``polars.read_avro`` on an in-memory
  container block), behind a small interface;
* ``arrow_cast``: the decoded columns -> the Parquet file's Arrow schema, exactly as the record path
  would have built them, or ``NotExact`` (the batch then goes record by record);
* ``parquet_batch``: ParquetFormat's ``BatchFormat`` for the writer's batch loop.
"""
