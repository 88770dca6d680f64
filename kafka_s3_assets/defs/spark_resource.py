"""The ``pyspark`` resource: dagster_pyspark's lazily created session, started so that the console shows
our lines and Spark's errors without Spark's start-up noise, or a Spark Connect session when its
settings have ``spark.remote`` (see ``spark.session``)."""

from __future__ import annotations

from dagster_pyspark import LazyPySparkResource

from ..spark.session import spark_session


class QuietPySparkResource(LazyPySparkResource):
    def _init_session(self) -> None:
        if self._spark_session is None:
            self._spark_session = spark_session(self.spark_config)
