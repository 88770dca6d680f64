"""Pure Kafka Connect S3 sink semantics.

Nothing in this package talks to Kafka, S3, Spark or Dagster: given a typed connector config and the
ordered records of one topic-partition, it decides which object each record goes to, when objects are
committed, and how they are encoded. The layers above only move bytes and work around it.
"""
