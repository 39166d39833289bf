"""Line-oriented machinery: framing into line chunks, prefix grammars and their parser, folding
of multi-line records, file hints, and :class:`~analyzer.ingest.lines.reader.LineReader`, the
base of every line reader."""
