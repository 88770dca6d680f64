"""What a user's console must not show."""

# What Spark and its JVM print at start-up when left alone; none of it is for our users.
SPARK_START_UP_NOISE = (
    "Using incubator modules",
    "Using Spark's default log4j profile",
    "NativeCodeLoader",
    "Setting default log level to",
    "To adjust logging level use sc.setLogLevel",
)
