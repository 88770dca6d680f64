"""Validation of the partitioner keys (``partitioner.class``, ``partition.*``, ``path.format``,
``locale``, ``timezone``, ``timestamp.*``), with the reference's messages.

The reference checks these in three places: ConfigDef validators (``timezone``), the connector
validator (FieldPartitioner needs ``partition.field.name``), and ``TimeBasedPartitioner.configure``
at task start (duration, path format, locale, timezone, Joda pattern, extractor). Here they are all
checked up front and reported together, each naming its key. Time-based keys are checked only when a
time-based partitioner (or canelmas' FieldAndTimeBasedPartitioner, which extends TimeBasedPartitioner) is
configured; Daily/Hourly replace ``partition.duration.ms`` and
``path.format`` with their own, so only the locale, timezone and extractor are theirs to get right.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .config_keys import ALL_KEYS, FIELD_AND_TIME_PARTITIONER, PARTITIONER_PACKAGE, REQUIRED
from .errors import ConfigProblem
from .timebased.calendar_math import MILLIS_PER_DAY, MILLIS_PER_HOUR
from .timebased.joda import IllegalPatternError, JodaFormatter, UnsupportedLocaleTextError, UnsupportedPatternError
from .timebased.timestamps import BUILTIN_EXTRACTORS, RECORD_FIELD
from .timebased.zones import UTC, zone_for_id

DEFAULT_PARTITIONER = PARTITIONER_PACKAGE + "DefaultPartitioner"
FIELD_PARTITIONER = PARTITIONER_PACKAGE + "FieldPartitioner"
TIME_BASED_PARTITIONER = PARTITIONER_PACKAGE + "TimeBasedPartitioner"
DAILY_PARTITIONER = PARTITIONER_PACKAGE + "DailyPartitioner"
HOURLY_PARTITIONER = PARTITIONER_PACKAGE + "HourlyPartitioner"
TIME_BASED_PARTITIONERS = (TIME_BASED_PARTITIONER, DAILY_PARTITIONER, HOURLY_PARTITIONER)
AFFIX_TYPES = ("PREFIX", "SUFFIX")


def setting(config: Any, key: str) -> Any:
    """``config[key]``, or the key's default when a (test) config leaves it out."""
    try:
        return config[key]
    except KeyError:
        default = ALL_KEYS[key].default
        if default is REQUIRED:
            raise
        return default


def _blank(value: Any) -> bool:
    """Commons-lang ``StringUtils.isBlank``."""
    return value is None or not str(value).strip()


def _invalid(key: str, value: Any, message: str) -> ConfigProblem:
    """Kafka's ``ConfigException(name, value, message)`` text."""
    shown = "null" if value is None else value
    return ConfigProblem(key, f"Invalid value {shown} for configuration {key}: {message}")


@dataclass(frozen=True)
class TimeBasedSettings:
    """What a time-based partitioner uses, after Daily/Hourly overrides and delimiter stripping."""

    duration_ms: int
    path_format: str
    locale: str
    timezone: str


def time_based_settings(config: Any) -> TimeBasedSettings:
    partitioner = setting(config, "partitioner.class")
    delim = setting(config, "directory.delim")
    if partitioner == DAILY_PARTITIONER:
        duration, path_format = MILLIS_PER_DAY, f"'year'=YYYY{delim}'month'=MM{delim}'day'=dd"
    elif partitioner == HOURLY_PARTITIONER:
        duration = MILLIS_PER_HOUR
        path_format = f"'year'=YYYY{delim}'month'=MM{delim}'day'=dd{delim}'hour'=HH"
    else:
        duration, path_format = setting(config, "partition.duration.ms"), setting(config, "path.format")
    if not _blank(delim) and path_format.endswith(delim) and path_format != delim:
        path_format = path_format[: -len(delim)]  # a trailing delimiter is the user's, not the format's
    return TimeBasedSettings(duration, path_format, setting(config, "locale"), setting(config, "timezone"))


def _zone_error(timezone: str) -> str | None:
    """Joda's message when ``DateTimeZone.forID(timezone)`` fails, else None."""
    try:
        zone_for_id(timezone)
    except ValueError as exc:
        return str(exc)
    return None


def _time_based_problems(values: Mapping[str, Any], partitioner: str) -> list[ConfigProblem]:
    problems = []
    delim = values.get("directory.delim", "/")
    path_ok = True
    if partitioner == TIME_BASED_PARTITIONER:
        duration = values.get("partition.duration.ms")
        if isinstance(duration, int) and duration < 0:
            problems.append(_invalid("partition.duration.ms", duration, "Partition duration needs to be a positive."))
        elif duration == 0:
            problems.append(
                _invalid(
                    "partition.duration.ms",
                    0,
                    "Partition duration needs to be a positive. (The "
                    "reference accepts 0, then fails every record dividing by zero.)",
                )
            )
        path_format = values.get("path.format")
        if _blank(path_format) or path_format == delim:
            problems.append(_invalid("path.format", path_format, "Path format cannot be empty."))
            path_ok = False
    locale = values.get("locale")
    if _blank(locale):
        problems.append(_invalid("locale", locale, "Locale cannot be empty."))
    timezone = values.get("timezone")
    zone = None
    if timezone is None or _blank(timezone):
        problems.append(_invalid("timezone", timezone, "Timezone cannot be empty."))
    else:
        error = _zone_error(timezone)  # configure() uses the value untrimmed
        if error is not None:
            problems.append(_invalid("timezone", timezone, error))
        else:
            zone = zone_for_id(timezone)
    if path_ok:
        settings = time_based_settings(values)
        try:
            JodaFormatter(settings.path_format, zone or UTC, "en" if locale is None or _blank(locale) else locale)
        except UnsupportedLocaleTextError as exc:
            problems.append(_invalid("locale", locale, str(exc)))
        except (IllegalPatternError, UnsupportedPatternError) as exc:
            problems.append(_invalid("path.format", settings.path_format, str(exc)))
    extractor = values.get("timestamp.extractor")
    if extractor not in BUILTIN_EXTRACTORS:
        problems.append(ConfigProblem("timestamp.extractor", f"Invalid timestamp extractor: {extractor}"))
    elif BUILTIN_EXTRACTORS[extractor] == RECORD_FIELD and _blank(values.get("timestamp.field")):
        problems.append(
            _invalid("timestamp.field", values.get("timestamp.field"), "The field to extract cannot be null or empty.")
        )
    return problems


def partitioner_problems(values: Mapping[str, Any]) -> list[ConfigProblem]:
    """Every problem of the partitioner keys of a parsed config (defaults filled in).

    Checked in the reference's order, so that of several timezone problems the one the reference
    would report first is kept: the ConfigDef validator, then ``S3SinkConnectorConfig``, then the
    partitioner's ``configure`` at task start.
    """
    problems: list[ConfigProblem] = []
    partitioner = values.get("partitioner.class")
    timezone = values.get("timezone") or ""
    if timezone.strip():  # PartitionerConfig.TimezoneValidator (trims), whatever the partitioner
        error = _zone_error(timezone.strip())
        if error is not None:
            problems.append(_invalid("timezone", timezone, error))
    schedule = values.get("rotate.schedule.interval.ms")
    if isinstance(schedule, int) and schedule > 0:
        if timezone == "":
            problems.append(
                ConfigProblem("timezone", "timezone configuration must be set when using rotate.schedule.interval.ms")
            )
        else:
            error = _zone_error(timezone)  # the writer resolves the value untrimmed
            if error is not None:
                problems.append(_invalid("timezone", timezone, error))
    if partitioner == FIELD_PARTITIONER and not [f for f in values.get("partition.field.name") or [] if f.strip()]:
        problems.append(
            ConfigProblem(
                "partition.field.name", "Partition field name cannot be null or empty when using FieldPartitioner."
            )
        )
    if partitioner in TIME_BASED_PARTITIONERS:
        problems.extend(_time_based_problems(values, partitioner))
    elif partitioner == FIELD_AND_TIME_PARTITIONER:  # a TimeBasedPartitioner subclass: configure() checks alike
        problems.extend(_time_based_problems(values, TIME_BASED_PARTITIONER))
    unique: list[ConfigProblem] = []
    for problem in problems:
        if problem.key == "timezone" and any(p.key == "timezone" for p in unique):
            continue  # one timezone problem is enough: the first the reference would raise
        if problem not in unique:
            unique.append(problem)
    return unique
