"""The PySpark job: distributes topic-partition exports to executors and collects their results.

The driver plans and collects small result dicts; records never leave the executors.
"""
