"""Time semantics of the time-based partitioners and scheduled rotation, as Joda-Time computes them:
patterns, zones and DST, calendar arithmetic, ISO-8601 parsing, timestamp extractors, boundaries."""
