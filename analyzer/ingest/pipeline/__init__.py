"""The ingest run: :mod:`.run` drives a bundle, :mod:`.files` reads files into a sink,
:mod:`.workers` does that in worker processes, :mod:`.progress` is what it reports."""
