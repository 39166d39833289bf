"""One reader per format; each is registered in :data:`analyzer.ingest.registry.READERS`."""
