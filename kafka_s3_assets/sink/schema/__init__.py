"""Connect and Avro schemas as Kafka Connect reasons about them.

Connect's schema model (:mod:`connect_schema`), the conversions AvroData makes between it and Avro
(:mod:`avro_to_connect`, :mod:`avro_from_connect`, :mod:`avro_defaults`, :mod:`avro_schema_json`), Avro
full-name resolution (:mod:`avro_names`), the Connect view of a value that partitioners read
(:mod:`connect_fields`), ``schema.compatibility`` (:mod:`compatibility`, :mod:`projection`) and the
registry subject name strategies (:mod:`subject_names`). Formats and converters use these; nothing here
reads records or writes objects.
"""
