"""Clients of the outside systems: Kafka (confluent-kafka), S3 (boto3), schema registry (REST)."""
