"""One topic-partition export: resume state from S3, read a range from Kafka, write, commit."""
