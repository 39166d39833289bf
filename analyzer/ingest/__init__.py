"""Read a bundle's files into canonical rows.

* :mod:`~analyzer.ingest.base` — the reader protocol and the per-file context;
  :mod:`~analyzer.ingest.registry` — the table of readers and the choice of one per file.
* :mod:`~analyzer.ingest.readers` — one reader per format.
* The machinery readers are built from: :mod:`~analyzer.ingest.lines` (line framing, prefix
  grammars, folding of multi-line records, the line-reader base), :mod:`~analyzer.ingest.json`
  (JSON arrays, documents, fields), :mod:`~analyzer.ingest.columns` (timestamps, ``extra``,
  Kubernetes names) and :mod:`~analyzer.ingest.blocks` (decoded blocks and byte spans).
* :mod:`~analyzer.ingest.pipeline` — the run: files through their readers into the case
  writer, in this process or in workers.
"""
