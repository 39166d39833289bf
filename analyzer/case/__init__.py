"""The case: the columnar, on-disk unit of analysis that ingest writes and everything reads."""
