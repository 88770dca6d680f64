"""Test utilities that inject faults into the real local servers (S3 fault proxy)."""
