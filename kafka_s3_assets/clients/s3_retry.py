"""How S3 requests are retried: the reference connector's policy (``s3.part.retries``,
``s3.retry.backoff.ms``), as a small pure object.

The reference builds its AWS SDK v2 client with ``maxAttempts(s3.part.retries)`` (total attempts,
the first included) and ``ExponentialDelayWithJitter(base=s3.retry.backoff.ms, max=24h)``: before
attempt ``n >= 2`` it waits uniformly in ``[0, min(24h, base * 2^(min(n,30) - 2)))`` ("full jitter").
botocore cannot say this: its retry modes fix the base and cap the delay at 20 s. So the boto3 client
is built with its own retries off (one attempt per call), and every S3 call the project makes goes
through :class:`Retrier` instead.

What is retried is what the SDK's default conditions retry: throttling (429, ``SlowDown`` and the
other throttling codes), 5xx, connection errors and resets, and timeouts. Other 4xx answers (403,
404, 409, 412, ...) are answers, not faults: they reach the caller at once, so, e.g., the 412 of the
manifest's conditional write is seen as a conflict on its first attempt.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from botocore.exceptions import ClientError, HTTPClientError, IncompleteReadError
from botocore.exceptions import ConnectionError as BotoConnectionError

from .errors import S3Error

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_BACKOFF_MS = 24 * 60 * 60 * 1000  # S3_RETRY_MAX_BACKOFF_TIME_MS = Duration.ofDays(1)
_JAVA_INT_MAX = 2**31 - 1  # the SDK clamps base and max delay to Integer.MAX_VALUE ms
_RETRIES_ATTEMPTED_CEILING = 30  # the SDK's exponent stops growing here (no overflow)

# AWS SDK v2 AwsErrorCode.THROTTLING_ERROR_CODES: throttling whatever the HTTP status.
THROTTLING_ERROR_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "ProvisionedThroughputExceededException",
        "SlowDown",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "RequestThrottled",
        "RequestThrottledException",
        "EC2ThrottledException",
        "PriorRequestNotComplete",
        "TransactionInProgressException",
    }
)
# AWS SDK v2 AwsErrorCode.RETRYABLE_ERROR_CODES. S3's RequestTimeout is a 400 ("your socket connection
# was not read from or written to within the timeout period"): a timeout, so retried.
RETRYABLE_ERROR_CODES = frozenset(
    {"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete", "InternalError"}
)
# A conditional write whose condition did not hold (412), or that met a concurrent conditional write of
# the same key (409): answers, whatever the status. S3 may embed one in a 200 answer to
# CompleteMultipartUpload, which botocore turns into a 500 carrying the embedded code.
CONDITION_ERROR_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict"})
TOO_MANY_REQUESTS = 429
NOT_IMPLEMENTED = 501  # a 5xx that says the server cannot do this at all: retrying cannot help


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def http_status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


def describe(exc: BaseException) -> str:
    """An S3 failure in one line: ``HTTP 503 SlowDown: Please reduce your request rate.`` for an
    answer (botocore's own text adds a misleading "reached max retries: 0"), the type and text else."""
    if isinstance(exc, ClientError):
        status, code = http_status(exc), error_code(exc)
        message = exc.response.get("Error", {}).get("Message", "")
        label = " ".join(part for part in (f"HTTP {status}", code if code != str(status) else "") if part)
        return f"{label}: {message}" if message else label
    return f"{type(exc).__name__}: {exc}"


def is_condition_failure(exc: ClientError) -> bool:
    """412 or 409 (a concurrent conditional write), or their codes: the condition of a write did not hold."""
    return http_status(exc) in (409, 412) or error_code(exc) in CONDITION_ERROR_CODES


def is_retryable(exc: BaseException) -> bool:
    """True for transient faults (throttling, 5xx, connection errors, timeouts); False for answers."""
    if isinstance(exc, ClientError):
        status, code = http_status(exc), error_code(exc)
        if code in CONDITION_ERROR_CODES:
            return False
        if code in THROTTLING_ERROR_CODES or code in RETRYABLE_ERROR_CODES:
            return True
        return status == TOO_MANY_REQUESTS or (status >= 500 and status != NOT_IMPLEMENTED)
    # botocore's connection family (refused, connect timeout, SSL, proxy), its HTTP-client family
    # (connection closed or reset, read timeout, a body cut off while streaming) and short bodies.
    # ParamValidationError, NoCredentialsError and the like are mistakes, not faults.
    return isinstance(exc, (BotoConnectionError, HTTPClientError, IncompleteReadError, ConnectionError, TimeoutError))


@dataclass(frozen=True)
class RetryPolicy:
    """``s3.part.retries`` total attempts and ``s3.retry.backoff.ms`` full-jitter backoff, as the reference
    connector retries."""

    total_attempts: int = 3  # s3.part.retries; 0 behaves as 1 (the SDK needs at least one)
    base_backoff_ms: int = 200  # s3.retry.backoff.ms
    max_backoff_ms: int = MAX_BACKOFF_MS

    @property
    def attempts(self) -> int:
        return max(1, self.total_attempts)

    def backoff_cap_ms(self, attempt: int) -> int:
        """Exclusive upper bound of the delay before ``attempt`` (1-based); 0 for the first attempt."""
        if attempt <= 1:
            return 0
        base = min(max(0, self.base_backoff_ms), _JAVA_INT_MAX)
        cap = min(max(0, self.max_backoff_ms), _JAVA_INT_MAX)
        return min(cap, base * 2 ** (min(attempt, _RETRIES_ATTEMPTED_CEILING) - 2))

    def delay_ms(self, attempt: int, rng: random.Random) -> int:
        """The delay before ``attempt``: uniform in ``[0, backoff_cap_ms(attempt))``, whole milliseconds
        as the SDK's ``Random.nextInt``. A base of 0 (the SDK rejects it) means no delay."""
        cap = self.backoff_cap_ms(attempt)
        return rng.randrange(cap) if cap > 0 else 0


class S3RetriesExhaustedError(S3Error):
    """An S3 request kept failing with transient faults for all of its attempts."""

    def __init__(self, request: str, attempts: int, last_error: BaseException):
        self.request = request
        self.attempts = attempts
        self.last_error = last_error
        noun = "attempt" if attempts == 1 else "attempts"
        super().__init__(f"{request} failed after {attempts} {noun}: {describe(last_error)}")


class Retrier:
    """Runs one S3 request under a :class:`RetryPolicy`. ``sleep`` and ``rng`` are injectable so tests
    neither wait nor depend on chance."""

    def __init__(
        self, policy: RetryPolicy, *, sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None
    ):
        self.policy = policy
        self._sleep = sleep
        self._rng = rng or random.Random()

    def call(self, request: str, fn: Callable[[], T]) -> T:
        """Return ``fn()``, retrying transient faults. ``request`` names the call for messages, e.g.
        ``"UploadPart 2 of s3://b/k"``.

        A non-retryable error is raised unchanged at once (callers interpret 404 or 412 themselves);
        when the attempts run out, :class:`S3RetriesExhaustedError` names the request, the attempts
        and the last fault.
        """
        attempts = self.policy.attempts
        for attempt in range(1, attempts + 1):
            if attempt > 1:
                self._sleep(self.policy.delay_ms(attempt, self._rng) / 1000)
            try:
                return fn()
            except Exception as exc:
                if not is_retryable(exc):
                    raise
                if attempt == attempts:
                    raise S3RetriesExhaustedError(request, attempts, exc) from exc
                log.info("%s: attempt %d of %d failed, retrying: %s", request, attempt, attempts, describe(exc))
        raise AssertionError("unreachable: the loop returns or raises")
