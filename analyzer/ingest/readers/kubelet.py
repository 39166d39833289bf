"""The ``kubelet`` reader: node logs of a Kubernetes node (formats.md §2).

One reader, four framings, picked from the head of the file:

* ``kubelet.klog``: klog files (``/var/log/kubelet.log``), optionally with the klog file
  header that carries the year and the machine name;
* ``kubelet.journal``: ``journalctl`` text (``short``, ``short-precise``, ``short-iso``,
  ``short-iso-precise``, ``short-unix``), the host in the syslog prefix, the kubelet's own
  klog line inside the message;
* ``kubelet.journal_json``: ``journalctl -o json`` (``__REALTIME_TIMESTAMP`` in µs,
  ``MESSAGE`` possibly a byte array or null);
* ``kubelet.journal_export``: ``journalctl -o export`` (binary-safe fields).

Structured kubelet messages (``"msg" pod="ns/name" containerName="c"``) give the pod, the
namespace and the container; the klog letter inside a journal message gives the severity,
else the journal ``PRIORITY``. Kubelet entries inside Cloud Logging exports are read by the
Cloud Logging reader with the same rules.
"""

from __future__ import annotations

import dataclasses
import json
import re
import struct
from collections.abc import Iterator
from typing import Any, ClassVar, Final

import polars as pl

from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.blocks import BOM
from analyzer.ingest.columns import k8s
from analyzer.ingest.columns.extra import append_members, compact_json, with_members
from analyzer.ingest.columns.timestamps import check_tz, epoch_micros
from analyzer.ingest.json.fields import FieldSpec, extract, json_lines
from analyzer.ingest.lines.grammars import GRAMMARS, Grammar
from analyzer.ingest.lines.head import head_lines, share_recognized
from analyzer.ingest.lines.hints import FileHints, path_host, year_anchor
from analyzer.ingest.lines.parse import parse_lines
from analyzer.ingest.lines.reader import LineReader
from analyzer.schema import host_expr, severity_expr
from analyzer.streams import Content

_IDENT: Final = r"(?P<logger>[^\s\[:]+)(?:\[(?P<tid>\d+)\])?: ?"
_HOST: Final = r"(?P<host>[^\s\[\]:]+)"

#: klog lines are absl-shaped; they get their own family name.
_KLOG: Final = tuple(
    dataclasses.replace(g, name=f"klog{g.name.removeprefix('absl')}", family="klog")
    for g in GRAMMARS
    if g.name in ("absl_epoch", "absl")
)
_JOURNAL: Final = (
    Grammar(
        "journal_short",
        "journal",
        rf"^(?P<stamp>[A-Z][a-z]{{2}} +\d{{1,2}} \d{{2}}:\d{{2}}:\d{{2}}(?:\.\d{{1,6}})?) "
        rf"{_HOST} {_IDENT}",
        "yearless",
        "%Y%b %d %H:%M:%S%.f",
        ((r" +", " "),),
    ),
    Grammar(
        # short-iso on older systemd writes the offset without a colon (+0000).
        "journal_iso",
        "journal",
        rf"^(?P<stamp>\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d{{1,9}})?[+-]\d{{4}}) "
        rf"{_HOST} {_IDENT}",
        "zoned",
    ),
    Grammar(
        # short-iso with a colon in the offset: the stamp was peeled off as a wrapper.
        "journal_iso_host",
        "journal",
        rf"^{_HOST} {_IDENT}",
        "none",
        after_timestamp=True,
    ),
    Grammar(
        "journal_unix",
        "journal",
        rf"^(?P<stamp>\d{{9,11}}\.\d{{1,9}}) {_HOST} {_IDENT}",
        "epoch",
    ),
)
#: The journal forms that carry their own stamp (a line that merely follows a timestamp
#: wrapper, as kubectl --timestamps writes them, is not a journal line).
_JOURNAL_STAMPED: Final = tuple(re.compile(g.prefix) for g in _JOURNAL if g.stamp != "none")
_NODE_IDENTS: Final = re.compile(
    r"\b(?:kubelet|containerd|crio|dockerd|node-problem-detector[\w.-]*|kube-proxy|"
    r"kube-container-runtime-monitor|health-monitor)(?:\[\d+\])?:"
)
_KLOG_GO: Final = re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ [\w.-]+\.go:\d+\] ")
_KLOG_HEADER_MACHINE: Final = re.compile(r"^Running on machine: (\S+)")
_OOM: Final = "out of memory"

_JOURNAL_FIELDS: Final = FieldSpec(
    {
        "realtime": ["$.__REALTIME_TIMESTAMP"],
        "hostname": ["$._HOSTNAME"],
        "message": ["$.MESSAGE"],
        "ident": ["$.SYSLOG_IDENTIFIER", "$._COMM"],
        "priority": ["$.PRIORITY"],
        "pid": ["$._PID", "$.SYSLOG_PID"],
        "unit": ["$._SYSTEMD_UNIT"],
        "boot": ["$._BOOT_ID"],
        "transport": ["$._TRANSPORT"],
    },
    {"message": ["$.MESSAGE"]},
)


class KubeletReader(LineReader):
    """Kubernetes node logs (see module docstring)."""

    name: ClassVar[str] = "kubelet"
    source: ClassVar[str] = "kubelet"
    grammars: ClassVar[tuple[Grammar, ...]] = _JOURNAL + _KLOG + GRAMMARS

    def sniff(self, head: bytes, path: str) -> float:
        """High for journal JSON/export heads and for klog or journal text of node agents."""
        body = head.removeprefix(BOM).lstrip()
        if body.startswith(b"{"):
            first = body.split(b"\n", 1)[0]
            if b'"logName"' in first or b'"insertId"' in first:
                return 0.0  # a Cloud Logging entry that wraps a journal record
            if b'"__REALTIME_TIMESTAMP"' in first or b'"__CURSOR"' in first:
                return 0.9
            return 0.0
        if body.startswith((b"__CURSOR=", b"__REALTIME_TIMESTAMP=")):
            return 0.9
        lines = head_lines(head)
        if not lines:
            return 0.0
        klog = sum(1 for line in lines if _KLOG_GO.match(line))
        node = sum(1 for line in lines if _NODE_IDENTS.search(line))
        journal = share_recognized(lines, _JOURNAL)
        if klog / len(lines) >= 0.3 or (node and journal >= 0.5):
            bonus = 0.1 if "kubelet" in path.lower() else 0.0
            return min(0.95, 0.65 + 0.2 * max(klog / len(lines), journal) + bonus)
        stamped = sum(1 for line in lines if any(p.match(line) for p in _JOURNAL_STAMPED))
        if stamped / len(lines) >= 0.5:
            # journalctl output of other units (k3s, systemd, the kernel) is still a node's
            # journal: above the text reader, which reads the same lines as bare syslog.
            return 0.62 + 0.1 * stamped / len(lines)
        return 0.0

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Dispatch on the framing seen in the head of the file."""
        head = content.head(SNIFF_BYTES).removeprefix(BOM).lstrip()
        if head.startswith(b"{"):
            yield from self._journal_json(content, ctx)
        elif head.startswith((b"__CURSOR=", b"__REALTIME_TIMESTAMP=")):
            yield from self._journal_export(content, ctx)
        else:
            yield from super().read(content, ctx)

    # -- klog and journal text ----------------------------------------------------------------

    def can_batch(self, head: bytes) -> bool:
        """Journal and klog text batch; the JSON and export framings are read on their own."""
        body = head.removeprefix(BOM).lstrip()
        return not body.startswith((b"{", b"__CURSOR=", b"__REALTIME_TIMESTAMP="))

    def hints(self, head: bytes, ctx: ReadContext) -> FileHints:
        """Year from the klog header or the head; host from the header or the path."""
        tz = check_tz(ctx.options.tz)
        host = None
        for line in head.decode("utf-8", "replace").splitlines()[:8]:
            match = _KLOG_HEADER_MACHINE.match(line)
            if match:
                host = match.group(1)
        return FileHints(
            year_anchor(head, ctx, tz, self.grammars), tz, host=host or path_host(ctx.path)
        )

    def finish(self, rows: pl.DataFrame, hints: FileHints) -> pl.DataFrame:
        """Journal lines: the kubelet's klog line inside the message decides level, logger
        and message; then pod, namespace and container from structured fields."""
        journal = rows["reader"].cast(pl.String).str.starts_with("kubelet.journal")
        if journal.any():
            rows = _unwrap_klog(rows, journal, hints)
        return _with_kubernetes_fields(rows)

    # -- journalctl -o json ----------------------------------------------------------------

    def _journal_json(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        for texts, lines, offsets in json_lines(content, ctx):
            frame = extract(_JOURNAL_FIELDS, texts, lines, offsets, ctx, "journal entry")
            if frame.height:
                frame = _decode_messages(frame, ctx)
                rows = _journal_rows(frame, "journal_json", ctx)
                ctx.counts.rows += rows.height
                yield rows

    # -- journalctl -o export --------------------------------------------------------------

    def _journal_export(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        data = content.read(-1)
        dropped = ctx.counts.dropped
        entries = list(_export_entries(data, ctx))
        ctx.counts.records += len(entries) + (ctx.counts.dropped - dropped)
        if not entries:
            return
        frame = pl.DataFrame(
            {
                "line": [e["line"] for e in entries],
                "offset": [e["offset"] for e in entries],
                "realtime": [e.get("__REALTIME_TIMESTAMP") for e in entries],
                "hostname": [e.get("_HOSTNAME") for e in entries],
                "message": [e.get("MESSAGE") for e in entries],
                "ident": [e.get("SYSLOG_IDENTIFIER") or e.get("_COMM") for e in entries],
                "priority": [e.get("PRIORITY") for e in entries],
                "pid": [e.get("_PID") for e in entries],
                "unit": [e.get("_SYSTEMD_UNIT") for e in entries],
                "boot": [e.get("_BOOT_ID") for e in entries],
                "transport": [e.get("_TRANSPORT") for e in entries],
            },
            schema_overrides={"line": pl.Int32, "offset": pl.Int64},
        )
        rows = _journal_rows(frame, "journal_export", ctx)
        ctx.counts.rows += rows.height
        yield rows


def _unwrap_klog(rows: pl.DataFrame, journal: pl.Series, hints: FileHints) -> pl.DataFrame:
    """Use the klog line inside journal messages for level, logger and message."""
    inner = parse_lines(
        rows["message"],
        # A batch of files (LineReader.read_batch) carries each row's own file anchor.
        anchor=rows["ts"]
        .dt.date()
        .fill_null(rows["batch_anchor"] if "batch_anchor" in rows.columns else hints.anchor),
        tz=hints.tz,
        grammars=_KLOG,
    )
    matched = pl.col("_matched")
    given = rows.columns
    rows = rows.with_columns(
        (journal & inner["grammar"].is_not_null()).alias("_matched"),
        inner["level"].alias("_in_level"),
        inner["logger"].alias("_in_logger"),
        inner["message"].alias("_in_message"),
        inner["ts"].alias("_in_ts"),
    )
    rows = with_members(
        rows,
        [
            ("ident", pl.when(matched).then(pl.col("logger")), "text"),
            (
                "payload_ts",
                pl.when(matched).then(pl.col("_in_ts")).dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ"),
                "token",
            ),
        ],
        "_more",
    )
    return rows.with_columns(
        pl.when(matched)
        .then(severity_expr(pl.col("_in_level")))
        .otherwise(pl.col("severity"))
        .alias("severity"),
        pl.when(matched).then(pl.col("_in_logger")).otherwise(pl.col("logger")).alias("logger"),
        pl.when(matched).then(pl.col("_in_message")).otherwise(pl.col("message")).alias("message"),
        append_members(pl.col("extra"), pl.col("_more")).alias("extra"),
    ).select(given)


def _with_kubernetes_fields(rows: pl.DataFrame) -> pl.DataFrame:
    """Pod, namespace and container named by structured kubelet messages, plus the JobSet
    workload encoded in the pod name; extra kubelet fields into ``extra``."""
    given = rows.columns
    message = pl.col("message")
    # Each regex once, as a column: an eager expression runs again wherever it is used.
    one, listed = k8s.kubelet_pod_matches(message)
    rows = with_members(
        rows.with_columns(
            one.alias("_one"),
            listed.alias("_listed"),
            k8s.kubelet_container(message).alias("_container"),
        ),
        k8s.kubelet_extra(message),
        "_more",
    )
    named = k8s.named_pod(pl.col("_one"), pl.col("_listed"))
    kernel_oom = (pl.col("logger") == "kernel") & message.str.contains(_OOM)
    rows = rows.with_columns(
        pl.coalesce(pl.col("pod"), named.struct.field("name")).alias("pod"),
        pl.coalesce(pl.col("namespace"), named.struct.field("ns")).alias("namespace"),
        pl.coalesce(pl.col("container"), pl.col("_container")).alias("container"),
        pl.when(kernel_oom & pl.col("severity").is_in(["DEFAULT", None], nulls_equal=True))
        .then(pl.lit("ERROR"))
        .otherwise(pl.col("severity"))
        .alias("severity"),
        append_members(pl.col("extra"), pl.col("_more")).alias("extra"),
    )
    parts = k8s.pod_parts(pl.col("pod"))
    return rows.with_columns(
        pl.coalesce(pl.col("workload"), parts.struct.field("base")).alias("workload")
    ).select(given)


def _decode_messages(frame: pl.DataFrame, ctx: ReadContext) -> pl.DataFrame:
    """MESSAGE as journald writes it in JSON: a string, a byte array (non-UTF-8 or
    non-printable content), an array of strings (the field repeated) or null (too large)."""
    special = frame["raw_message"].str.starts_with("[") | (frame["raw_message"] == "null")
    if not special.any():
        return frame.drop("raw_message")
    decoded: list[str | None] = []
    for line, offset, raw, plain in frame.select(
        "line", "offset", "raw_message", "message"
    ).iter_rows():
        if raw == "null":
            ctx.repaired(
                line,
                offset,
                "MESSAGE is null: journalctl left out a field larger than its limit "
                "(export with --all to keep it)",
            )
            decoded.append("")
        elif raw is not None and raw.startswith("["):
            try:
                values = json.loads(raw)
                joined = "\n".join(str(v) for v in values)
            except RecursionError:  # nested deeper than Python's json goes: keep the JSON text
                values, joined = [raw], raw
            if all(isinstance(v, int) for v in values):
                blob = bytes(v & 0xFF for v in values)
                try:
                    decoded.append(blob.decode("utf-8"))
                except UnicodeDecodeError:
                    decoded.append(blob.decode("utf-8", "replace"))
                    ctx.repaired(
                        line,
                        offset,
                        "MESSAGE is binary and not valid UTF-8; invalid bytes were replaced "
                        "by U+FFFD",
                    )
            else:
                decoded.append(joined)
        else:
            decoded.append(plain)
    return frame.with_columns(pl.Series("message", decoded, dtype=pl.String)).drop("raw_message")


def _journal_rows(frame: pl.DataFrame, framing: str, ctx: ReadContext) -> pl.DataFrame:
    """Canonical rows from journal fields (JSON or export)."""
    tz = check_tz(ctx.options.tz)
    ts = epoch_micros(pl.col("realtime"))
    inner = parse_lines(
        frame["message"].fill_null(""),
        anchor=frame.select(ts.dt.date().fill_null(ctx.anchor_date())).to_series(),
        tz=tz,
        grammars=_KLOG,
    )
    frame = pl.concat([frame, inner.select(pl.all().name.prefix("in_"))], how="horizontal")
    matched = pl.col("in_grammar").is_not_null()
    rows = frame.select(
        pl.col("line"),
        pl.col("offset"),
        pl.lit("kubelet").alias("source"),
        pl.lit(f"kubelet.{framing}").alias("reader"),
        ts.alias("ts"),
        pl.when(ts.is_not_null()).then(pl.lit("exact")).alias("ts_quality"),
        pl.coalesce(severity_expr(pl.col("in_level")), severity_expr(pl.col("priority"))).alias(
            "severity"
        ),
        host_expr(pl.col("hostname")).alias("host"),
        pl.lit(None, dtype=pl.String).alias("pod"),
        pl.lit(None, dtype=pl.String).alias("container"),
        pl.lit(None, dtype=pl.String).alias("namespace"),
        pl.lit(None, dtype=pl.String).alias("workload"),
        pl.when(matched).then(pl.col("in_logger")).otherwise(pl.col("ident")).alias("logger"),
        pl.when(matched)
        .then(pl.col("in_message"))
        .otherwise(pl.col("message").fill_null(""))
        .alias("message"),
        compact_json(
            [
                ("ident", pl.col("ident"), "text"),
                ("priority", pl.col("priority"), "token"),
                ("pid", pl.col("pid"), "token"),
                ("unit", pl.col("unit"), "text"),
                ("boot_id", pl.col("boot"), "token"),
                ("transport", pl.col("transport"), "token"),
                (
                    "payload_ts",
                    pl.when(matched).then(pl.col("in_ts")).dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ"),
                    "token",
                ),
            ]
        ).alias("extra"),
    )
    missing = rows.filter(pl.col("ts").is_null())
    for line, offset in missing.select("line", "offset").iter_rows():
        ctx.repaired(line, offset, "journal entry has no usable __REALTIME_TIMESTAMP")
    return _with_kubernetes_fields(rows)


def _export_entries(data: bytes, ctx: ReadContext) -> Iterator[dict[str, Any]]:
    """Entries of ``journalctl -o export``: ``NAME=value`` lines, binary fields as
    ``NAME\n`` + little-endian 64-bit length + bytes + ``\n``, entries ending at an empty
    line (systemd.io/JOURNAL_EXPORT_FORMATS). Each entry carries the line and byte offset
    where it starts."""
    position = 0
    line = 1
    size = len(data)

    def advance(to: int) -> None:
        nonlocal position, line
        line += data.count(b"\n", position, to)
        position = to

    while position < size:
        if data[position] == 0x0A:  # empty lines between entries
            advance(position + 1)
            continue
        entry: dict[str, Any] = {"line": line, "offset": position}
        while position < size and data[position] != 0x0A:
            end = data.find(b"\n", position)
            end = size if end < 0 else end
            field = data[position:end]
            if b"=" in field:
                name, _, value = field.partition(b"=")
                entry[name.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
                advance(min(end + 1, size))
                continue
            # A binary-safe field: its name, then a 64-bit length, the bytes and a newline.
            header = data[end + 1 : end + 9]
            length = struct.unpack("<Q", header)[0] if len(header) == 8 else -1
            blob = data[end + 9 : end + 9 + length] if length >= 0 else b""
            if length < 0 or len(blob) < length:
                ctx.drop(
                    entry["line"],
                    entry["offset"],
                    "journal export entry is cut off inside a binary field",
                    data[entry["offset"] : entry["offset"] + 4096],
                )
                return
            try:
                text = blob.decode("utf-8")
            except UnicodeDecodeError:
                text = blob.decode("utf-8", "replace")
                ctx.repaired(
                    entry["line"],
                    entry["offset"],
                    f"{field.decode('utf-8', 'replace')} is binary and not valid UTF-8; invalid "
                    "bytes were replaced by U+FFFD",
                )
            entry[field.decode("utf-8", "replace")] = text
            advance(min(end + 9 + length + 1, size))
        if position < size:
            advance(position + 1)  # the empty line that ends the entry
        yield entry
