"""The Dagster surface: assets, checks, sensors and resources built from connector configs."""
