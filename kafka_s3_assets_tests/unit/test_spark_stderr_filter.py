"""The filter between Spark's JVM and our stderr: the JVM's own start-up warning is dropped, everything
else passes in order, and the reason of a failed start is the JVM's last exception line."""

import os

import pytest

from kafka_s3_assets.spark.session import _StderrFilter

pytestmark = [pytest.mark.unit]

JVM_STDERR = b"""WARNING: Using incubator modules: jdk.incubator.vector
26/11/23 19:54:01 ERROR SparkContext: Error initializing SparkContext.
Exception in thread "main" org.apache.spark.SparkException: Master must either be yarn or start with spark, \
k8s, or local
\tat org.apache.spark.deploy.SparkSubmit.error(SparkSubmit.scala:1068)
\tat org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)
"""


def filtered(data: bytes) -> tuple[bytes, _StderrFilter]:
    source_read, source_write = os.pipe()
    target_read, target_write = os.pipe()
    stderr_filter = _StderrFilter(os.fdopen(source_read, "rb"), target_write)
    stderr_filter.start()
    os.write(source_write, data)
    os.close(source_write)
    stderr_filter.join(timeout=10)
    with os.fdopen(target_read, "rb") as target:
        return target.read(), stderr_filter


def test_only_the_jvm_start_up_warning_is_dropped():
    forwarded, _ = filtered(JVM_STDERR)
    assert forwarded == JVM_STDERR.split(b"\n", 1)[1]


def test_the_reason_of_a_failed_start_is_the_last_exception_line():
    _, stderr_filter = filtered(JVM_STDERR)
    assert stderr_filter.reason() == (
        "org.apache.spark.SparkException: Master must either be yarn or start with spark, k8s, or local"
    )
    assert filtered(b"")[1].reason() == "no message from the JVM"
