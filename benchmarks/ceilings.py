"""Library ceilings beside the ingest figures: how fast the best columnar library does the
same step over the same file (issue 20: "where a format cannot get there, the measured
ceiling of the best library for that step in the same run, shown side by side").

Each ceiling is a fresh ``python -m benchmarks.ceilings LIBRARY INPUT FILE OUT`` child, timed
like ``culprit ingest`` (:func:`benchmarks.measure.run_once`: wall time around the child,
interpreter start-up and imports included; CPU and peak RSS from its rusage), that reads the
input with the library, keeps what culprit keeps and writes it to Parquet:

* Cloud Logging JSON lines: polars ``read_ndjson`` and pyarrow ``json.read_json``, each with an
  explicit schema of the LogEntry fields culprit takes
  (:data:`analyzer.ingest.readers.cloud_logging_fields.FIELDS`, every value a string; other
  fields are skipped), then ``write_parquet`` / ``pq.write_table``;
* the gcloud JSON array: polars ``read_json`` with the same schema (pyarrow's JSON reader reads
  only one object per line);
* container text and kubelet journals: polars ``read_csv`` of the file as one column of lines
  (a separator and no quote character that never occur), then culprit's own prefix grammars,
  one ``str.extract_groups`` per grammar over the lines no earlier grammar matched, the
  level and the stamp parsed (yearless stamps given a year), and ``write_parquet``. The
  kubelet reader's klog grammars run over the message left after the journal prefix.

A ceiling does less than culprit (no quarantine, line numbers, folding, host identity, dedup
or ``extra``); it bounds what the step can cost with that library on this machine. The child
prints the number of rows it wrote.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from benchmarks import measure, say

#: A byte that occurs in no input line: the "separator" that makes ``read_csv`` read lines.
_NO_SEPARATOR: Final = "\x1f"


@dataclass(frozen=True)
class Ceiling:
    """One library ceiling: its name, its label in RESULTS.md, the inputs it applies to."""

    name: str
    label: str
    inputs: tuple[str, ...]
    #: The distribution whose version is recorded (and that must be importable).
    distribution: str


_JSON_LINES: Final = ("cloud_logging",)
_LINES: Final = ("text", "kubelet")
#: Every ceiling, in table order.
CEILINGS: Final = (
    Ceiling(
        "polars_ndjson",
        "polars `read_ndjson` (explicit schema) + `write_parquet`",
        _JSON_LINES,
        "polars",
    ),
    Ceiling(
        "pyarrow_json",
        "pyarrow `json.read_json` (explicit schema) + `pq.write_table`",
        _JSON_LINES,
        "pyarrow",
    ),
    Ceiling(
        "polars_json",
        "polars `read_json` (explicit schema) + `write_parquet`",
        ("cloud_logging_array",),
        "polars",
    ),
    Ceiling(
        "polars_lines",
        "polars `read_csv` of lines + one `str.extract_groups` per grammar + `write_parquet`",
        _LINES,
        "polars",
    ),
)


def ceilings_for(name: str) -> list[Ceiling]:
    """The ceilings measured beside the input ``name`` (none for the others)."""
    return [ceiling for ceiling in CEILINGS if name in ceiling.inputs]


# -- what each child needs from culprit, computed in the parent and passed as JSON --------------


def _path_parts(path: str) -> list[str]:
    """``$.labels."a.b/c".x`` -> ``["labels", "a.b/c", "x"]``."""
    return [quoted or plain for quoted, plain in re.findall(r'\."([^"]+)"|\.([^."]+)', path[1:])]


def entry_schema() -> dict[str, Any]:
    """The LogEntry fields culprit takes, as a tree: a field name maps to its sub-fields, or
    to None for a value read as a string."""
    from analyzer.ingest.readers.cloud_logging_fields import FIELDS

    tree: dict[str, Any] = {}
    for alternatives in FIELDS.values():
        for path in alternatives:
            *parents, leaf = _path_parts(path)
            node = tree
            for part in parents:
                node = node.setdefault(part, {})
            node.setdefault(leaf, None)
    return tree


def _grammars(stage: Sequence[Any]) -> list[dict[str, str]]:
    return [
        {"pattern": g.prefix, "stamp": g.stamp, "fmt": g.fmt, "lvl": str("lvl" in g.groups)}
        for g in stage
    ]


def grammar_stages(name: str) -> list[list[dict[str, str]]]:
    """The prefix grammars culprit's reader of input ``name`` runs, stage by stage (each
    stage over the message the previous one left)."""
    from analyzer.ingest.lines.grammars import GRAMMARS
    from analyzer.ingest.readers import kubelet

    if name == "kubelet":
        journal = [*kubelet._JOURNAL, *GRAMMARS]
        return [_grammars(journal), _grammars(kubelet._KLOG)]
    return [_grammars(GRAMMARS)]


def child_spec(name: str) -> str:
    """What the child of input ``name`` needs, as one JSON argument."""
    if name in _LINES:
        return json.dumps({"stages": grammar_stages(name)})
    return json.dumps({"schema": entry_schema()})


# -- measuring -----------------------------------------------------------------------------------


def _version(distribution: str) -> str | None:
    import importlib.metadata

    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return None


def measure_ceiling(
    ceiling: Ceiling, name: str, path: Path, runs: int, workdir: Path
) -> dict[str, Any]:
    """``ceiling`` over the input ``name`` at ``path``, ``runs`` times; MiB/s over its size."""
    out = workdir / f"ceiling-{name}-{ceiling.name}.parquet"
    command = [
        sys.executable,
        "-m",
        "benchmarks.ceilings",
        ceiling.name,
        name,
        str(path),
        str(out),
        child_spec(name),
    ]
    size = measure.tree_bytes(path)
    results: list[measure.Run] = []
    rows: set[int] = set()
    for number in range(1, runs + 1):
        log = workdir / f"ceiling-{name}-{ceiling.name}-{number}.log"
        out.unlink(missing_ok=True)
        run = measure.run_once(command, log)
        results.append(run)
        rows.add(int(log.read_text().split()[-1]))
        say(f"  {ceiling.name} run {number}/{runs}: {measure.describe(run, size)}")
    out.unlink(missing_ok=True)
    return {
        "name": ceiling.name,
        "label": ceiling.label,
        "version": _version(ceiling.distribution),
        "command": f"python -m benchmarks.ceilings {ceiling.name} {name} FILE OUT SPEC",
        "rows": max(rows),
        **measure.timings(results, size),
    }


def measure_ceilings(name: str, path: Path, runs: int, workdir: Path) -> dict[str, Any]:
    """Every ceiling of the input ``name``; an empty dict for an input without any."""
    ceilings = ceilings_for(name)
    if not ceilings:
        return {}
    say(f"library ceilings over {path.name} x{runs}")
    return {"ceilings": [measure_ceiling(c, name, path, runs, workdir) for c in ceilings]}


def describe_ceilings(result: dict[str, Any], unit: float = 1.0, suffix: str = "MiB/s") -> str:
    """The ceilings of one input's result for RESULTS.md: ``label 95.1 MiB/s (CPU 10.2 s)``;
    ``unit`` converts MiB/s (``MIB / 10**6`` gives MB/s)."""
    parts = []
    for c in result.get("ceilings") or []:
        cpu = statistics.median(run["user_s"] + run["system_s"] for run in c["runs"])
        parts.append(f"{c['label']} {c['mib_per_s'] * unit:,.1f} {suffix} (CPU {cpu:,.1f} s)")
    return "; ".join(parts)


def best_ceiling(result: dict[str, Any]) -> dict[str, Any] | None:
    """The fastest ceiling of one input's result, or None."""
    return max(result.get("ceilings") or [], key=lambda c: c["mib_per_s"], default=None)


# -- the children -------------------------------------------------------------------------------


def _json_lines_pyarrow(path: Path, out: Path, schema: dict[str, Any]) -> int:
    import pyarrow as pa
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    def struct(tree: dict[str, Any]) -> list[pa.Field]:
        return [
            pa.field(k, pa.string() if v is None else pa.struct(struct(v))) for k, v in tree.items()
        ]

    options = pj.ParseOptions(
        explicit_schema=pa.schema(struct(schema)), unexpected_field_behavior="ignore"
    )
    table = pj.read_json(path, parse_options=options)
    pq.write_table(table, out)
    return int(table.num_rows)


def _polars_schema(tree: dict[str, Any]) -> dict[str, Any]:
    import polars as pl

    return {k: pl.String if v is None else pl.Struct(_polars_schema(v)) for k, v in tree.items()}


def _json_polars(path: Path, out: Path, schema: dict[str, Any], *, array: bool) -> int:
    import polars as pl

    read = pl.read_json if array else pl.read_ndjson
    frame = read(path, schema=_polars_schema(schema))
    frame.write_parquet(out)
    return frame.height


def _lines_polars(path: Path, out: Path, stages: list[list[dict[str, str]]]) -> int:
    import polars as pl

    lines = pl.read_csv(
        path,
        has_header=False,
        new_columns=["message"],
        separator=_NO_SEPARATOR,
        quote_char=None,
        schema_overrides={"message": pl.String},
        encoding="utf8-lossy",
        truncate_ragged_lines=True,
    )
    frame = lines.with_row_index("row").with_columns(
        pl.col("message").fill_null(""),
        pl.lit(None, dtype=pl.String).alias("level"),
        pl.lit(None, dtype=pl.Datetime("ns")).alias("ts"),
    )
    for stage in stages:
        rest, parts = frame, []
        for grammar in stage:
            groups = rest.with_columns(
                pl.col("message").str.extract_groups(grammar["pattern"]).alias("_g")
            )
            hit = pl.col("_g").struct.field("all").is_not_null()
            parts.append(_parsed(groups.filter(hit), grammar))
            rest = groups.filter(~hit).drop("_g")
        # First match wins: each stage parses the message the previous stage left.
        frame = pl.concat([rest, *parts], how="vertical_relaxed").sort("row")
    frame.write_parquet(out)
    return frame.height


def _parsed(matched: Any, grammar: dict[str, str]) -> Any:
    """The lines ``grammar`` matched: their level and stamp, the message after the prefix."""
    import polars as pl

    groups = pl.col("_g")
    stamp = groups.struct.field("stamp") if "(?P<stamp>" in grammar["pattern"] else None
    if stamp is None:
        ts = pl.lit(None, dtype=pl.Datetime("ns"))
    elif grammar["stamp"] == "epoch":
        ts = (stamp.cast(pl.Float64, strict=False) * 1e9).cast(pl.Int64).cast(pl.Datetime("ns"))
    elif grammar["stamp"] == "yearless":
        ts = pl.concat_str([pl.lit("2026"), stamp]).str.to_datetime(
            grammar["fmt"], strict=False, time_unit="ns"
        )
    elif grammar["stamp"] == "local":
        ts = stamp.str.to_datetime(grammar["fmt"], strict=False, time_unit="ns")
    else:
        ts = stamp.str.to_datetime(strict=False, time_unit="ns", time_zone="UTC")
        ts = ts.dt.replace_time_zone(None)
    level = groups.struct.field("lvl") if grammar["lvl"] == "True" else pl.lit(None, pl.String)
    return matched.select(
        "row",
        pl.col("message").str.slice(groups.struct.field("all").str.len_chars()),
        pl.coalesce(level, pl.col("level")).alias("level"),
        pl.coalesce(pl.col("ts"), ts).alias("ts"),
    )


def child(argv: Sequence[str]) -> int:
    """``python -m benchmarks.ceilings CEILING INPUT FILE OUT SPEC``: one ceiling's work."""
    name, _input, file, out, spec_text = argv
    spec = json.loads(spec_text)
    path, target = Path(file), Path(out)
    if name == "pyarrow_json":
        rows = _json_lines_pyarrow(path, target, spec["schema"])
    elif name in ("polars_ndjson", "polars_json"):
        rows = _json_polars(path, target, spec["schema"], array=name == "polars_json")
    elif name == "polars_lines":
        rows = _lines_polars(path, target, spec["stages"])
    else:
        raise SystemExit(f"unknown ceiling {name!r}")
    print(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(child(sys.argv[1:]))
