"""Fold multi-line records (tracebacks, stack dumps, klog ``key=<`` blocks) into one row.

Rules (formats.md §5.3), decided per line with polars expressions over a whole chunk:

* a line that matched a prefix grammar starts a record;
* an unprefixed line continues the record before it when it is indented, is a Go stack
  frame after an error line or a frame, is a traceback chain marker, sits inside
  ``*** Begin/End stack trace ***``, closes a traceback (``XlaRuntimeError: …`` after a
  frame), is a ``Traceback (most recent call last):`` right after an error-level line or a
  chain marker, or follows a prefixed line ending in ``:``;
* coordination-service statuses (failure-modes.md §1.3) continue on bare lines: a JAX task
  name (``/job:jax_worker/replica:0/task:3``) continues the record before it when the
  previous line is a task name or belongs to a record with a line ending in ``:`` (``The
  following tasks are unhealthy …:``, ``Example stragglers:``, ``Some timed out task
  names:``); ``The tasks have crashed. Check the task logs …`` continues after a task name;
  ``# of tasks that reached the barrier: …`` continues after a ``Barrier timed out. Id: …``
  line and ``The first task at the barrier: …`` after it;
* gRPC details of a coordination error: ``Additional GRPC error information from remote
  target …`` continues an error-level line, and a line starting ``:`` (``:UNKNOWN:Error
  received from peer …``) continues that line;
* XLA's ``Total hbm usage >= …:`` table continues a record that holds a traceback or a
  previous line that mentions ``RESOURCE_EXHAUSTED`` (its rows are indented);
* a TensorFlow status names the task it came from and states the error on the next line
  (``… From /job:worker/replica:0/task:1:`` then ``All 10 retry attempts failed …``): the line
  after one ending in such a task name continues it;
* otherwise an unprefixed line is a record of its own;
* a blank line belongs to the record around it when the next non-blank line continues that
  record, and is otherwise counted as blank;
* a record is cut after ``max_lines`` lines or ``max_bytes`` bytes so a runaway dump cannot
  grow one row without bound;
* where the frame has a ``fold_break`` column, the first non-blank line at or after a line
  with ``fold_break`` set starts a record whatever it says, and nothing before the break (an
  open ``*** Begin stack trace ***`` block, the attributes of the previous line) reaches past
  it: the frame is then a concatenation of independent segments (Cloud Logging streams, cut
  at time gaps).
"""

from __future__ import annotations

from typing import Final

import polars as pl

TRACEBACK_HEADER: Final = "Traceback (most recent call last):"
_CHAIN_MARKERS: Final = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
#: The line that closes a traceback: ``RuntimeError: …``, ``KeyboardInterrupt``, or any
#: (dotted) CamelCase class name and a message, as third-party exceptions are named
#: (``google.api_core.exceptions.ServiceUnavailable: 503 …``).
EXCEPTION_LINE: Final = (
    r"^(?:[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Fault)(?::|$)"
    r"|(?:[A-Za-z_]\w*\.)*[A-Z][A-Za-z0-9]*: )"
)
_ERROR_LEVELS: Final = ("E", "F", "ERROR", "CRITICAL", "FATAL", "EXCEPTION")
#: A JAX task name as the coordination service lists it, alone on a line.
TASK_NAME: Final = r"^/job:[^\s/]+/replica:\d+/task:\d+$"
_TASKS_CRASHED: Final = "The tasks have crashed. Check the task logs"
_BARRIER_TIMEOUT: Final = "Barrier timed out. Id: "
_BARRIER_REACHED: Final = "# of tasks that reached the barrier: "
_BARRIER_FIRST: Final = "The first task at the barrier: "
_GRPC_DETAILS: Final = "Additional GRPC error information from remote target "
_HBM_TABLE: Final = "Total hbm usage >= "
#: A TensorFlow status' origin, ending its line: the error follows on the next one.
_TF_FROM_TASK: Final = r"\bFrom /job:[^\s/]+/replica:\d+/task:\d+:\s*$"


def mark_records(frame: pl.LazyFrame, *, max_lines: int, max_bytes: int) -> pl.LazyFrame:
    """Add ``record`` (a record number per line, null for skipped blank lines), ``is_header``
    (the line starts a record), ``is_split`` (the line starts a piece of a record that was cut
    at the caps), ``is_blank`` (a blank line outside any record) and ``joins_previous`` (the
    line continues a CRI partial line: join it without a newline) to a frame of lines.

    ``frame`` needs ``text`` (the raw line), ``message`` (the line without prefixes),
    ``grammar`` (null when no grammar matched), ``level`` and ``cri_tag``; ``fold_message``
    and ``fold_level``, when present, replace ``message`` and ``level`` for the decisions.
    The first line always starts a record unless it is blank. An optional ``fold_break``
    (bool) column starts a segment at every line where it is true: the segment's first
    non-blank line starts a record like the first line of the frame (blank lines before it
    are counted blank), and no rule looks across the break. Lazy in, lazy out: the caller
    decides when to collect.
    """
    names = frame.collect_schema().names()
    body = pl.col("fold_message" if "fold_message" in names else "message")
    level = pl.col("fold_level" if "fold_level" in names else "level")
    # Blank after wrappers: a torchrun "[rank0]: " line with nothing after it is blank too.
    blank = body.str.strip_chars().str.len_bytes() == 0
    flags = frame.with_row_index("_i")
    segmented = "fold_break" in names
    if segmented:
        # A break also covers the blank lines after it, up to the segment's first non-blank
        # line: a line breaks when a break came after the last non-blank line before it.
        raw = pl.col("fold_break").fill_null(False)
        count = raw.cast(pl.UInt32).cum_sum()
        before = pl.when(~blank).then(count).shift(1).forward_fill().fill_null(0)
        flags = flags.with_columns((raw | (count > before)).alias("_brk"))
    brk = pl.col("_brk") if segmented else pl.lit(False)
    next_break = brk.shift(-1).fill_null(False) if segmented else pl.lit(False)
    flags = flags.with_columns(
        blank.alias("is_blank"),
        pl.col("grammar").is_not_null().alias("_matched"),
        body.str.contains(r"^[ \t]").alias("_indented"),
        (body == TRACEBACK_HEADER).alias("_tb"),
        body.is_in(list(_CHAIN_MARKERS)).alias("_chain"),
        body.str.contains(EXCEPTION_LINE).alias("_exc"),
        body.str.starts_with("*** Begin stack trace ***").alias("_begin"),
        # A Go stack frame: a qualified function name, then its file on a TAB-indented line.
        (
            body.str.contains(r"^[\w.\-/]+\.[\w.()*\[\]-]+$")
            & pl.col("text").shift(-1).str.starts_with("\t").fill_null(False)
            & ~next_break
        ).alias("_go_frame"),
        body.str.starts_with("*** End stack trace ***").alias("_end"),
        # Only a recognized record ending in ':' or '<' announces continuation lines; plain
        # text ending in ':' says nothing about the next line.
        (pl.col("grammar").is_not_null() & body.str.strip_chars_end().str.contains(r"[:<]$")).alias(
            "_colon"
        ),
        (pl.col("grammar").is_not_null() & level.is_in(list(_ERROR_LEVELS))).alias("_error_header"),
        body.str.strip_chars_end().str.ends_with(":").alias("_ends_colon"),
        body.str.strip_chars_end().str.contains(TASK_NAME).alias("_task"),
        body.str.starts_with(_TASKS_CRASHED).alias("_crashed"),
        body.str.contains(_BARRIER_TIMEOUT, literal=True).alias("_barrier"),
        body.str.starts_with(_BARRIER_REACHED).alias("_reached"),
        body.str.starts_with(_BARRIER_FIRST).alias("_barrier_first"),
        body.str.starts_with(_GRPC_DETAILS).alias("_grpc"),
        body.str.starts_with(":").alias("_grpc_detail"),
        body.str.starts_with(_HBM_TABLE).alias("_hbm"),
        body.str.contains("RESOURCE_EXHAUSTED", literal=True).alias("_exhausted"),
        body.str.contains(_TF_FROM_TASK).alias("_tf_from"),
    )
    opened = pl.col("_begin").cast(pl.Int32).cum_sum().shift(1, fill_value=0)
    closed = pl.col("_end").cast(pl.Int32).cum_sum().shift(1, fill_value=0)
    if segmented:
        # Blocks opened in an earlier segment do not count: subtract the running totals at
        # the segment's first line.
        opened = opened - pl.when(brk).then(opened).forward_fill().fill_null(0)
        closed = closed - pl.when(brk).then(closed).forward_fill().fill_null(0)
    # Attributes of the previous non-blank line: blank lines are masked, then the last value
    # before each line is carried forward over them (a blank segment start stops the carry).
    previous = [
        "_indented",
        "_tb",
        "_chain",
        "_error_header",
        "_colon",
        "_task",
        "_barrier",
        "_reached",
        "_grpc",
        "_exhausted",
        "_tf_from",
    ]
    flags = flags.with_columns(
        (opened > closed).alias("_in_block"), *[_previous(c, brk) for c in previous]
    )
    first = (pl.col("_i") == 0) | brk
    # The container runtime splits long lines into CRI records tagged P (partial); the record
    # after one belongs to the same line (formats.md §2.5).
    after_partial = (pl.col("cri_tag").shift(1) == "P").fill_null(False) & ~brk
    continues = ~first & (
        after_partial
        | (
            ~pl.col("_matched")
            & (
                pl.col("_indented")
                | pl.col("_chain")
                | pl.col("_begin")
                | pl.col("_in_block")
                | pl.col("_end")
                | (pl.col("_exc") & (pl.col("_prev_indented") | pl.col("_prev_tb")))
                | (pl.col("_go_frame") & (pl.col("_prev_indented") | pl.col("_prev_error_header")))
                | (pl.col("_tb") & (pl.col("_prev_error_header") | pl.col("_prev_chain")))
                | pl.col("_prev_colon")
                | (pl.col("_crashed") & pl.col("_prev_task"))
                | (pl.col("_reached") & pl.col("_prev_barrier"))
                | (pl.col("_barrier_first") & pl.col("_prev_reached"))
                | (pl.col("_grpc") & pl.col("_prev_error_header"))
                | (pl.col("_grpc_detail") & pl.col("_prev_grpc"))
                | pl.col("_prev_tf_from")
            )
        )
    )
    # Rules that look at the whole record before a line: records as the rules above cut them
    # (the rules below only ever join them), then whether the record so far holds a line
    # ending in ':' or a traceback header, by running counts minus their value at its start.
    flags = flags.with_columns(continues.alias("_base"))
    start = ~pl.col("_base") & ~pl.col("is_blank")
    held = []
    for flag, name in (("_ends_colon", "_rec_colon"), ("_tb", "_rec_tb")):
        seen = (pl.col(flag) & ~pl.col("is_blank")).cast(pl.UInt32)
        total = seen.cum_sum()
        held.append(
            (total - pl.when(start).then(total - seen).forward_fill().fill_null(0) > 0).alias(name)
        )
    flags = flags.with_columns(held)
    flags = flags.with_columns(_previous("_rec_colon", brk), _previous("_rec_tb", brk))
    continues = pl.col("_base") | (
        ~first
        & ~pl.col("_matched")
        & (
            (pl.col("_task") & (pl.col("_prev_task") | pl.col("_prev_rec_colon")))
            | (pl.col("_hbm") & (pl.col("_prev_rec_tb") | pl.col("_prev_exhausted")))
        )
    )
    flags = flags.with_columns(
        # A blank segment start is settled (not continuing) so no blank before it looks past.
        pl.when(pl.col("is_blank") & brk)
        .then(False)
        .when(pl.col("is_blank"))
        .then(None)
        .otherwise(continues)
        .alias("_cont")
    )
    # A blank line continues a record when the next non-blank line does.
    flags = flags.with_columns(
        pl.when(pl.col("is_blank") & ~first)
        .then(pl.col("_cont").backward_fill().fill_null(False))
        .otherwise(pl.col("_cont"))
        .alias("_cont")
    )
    skipped = pl.col("is_blank") & ~pl.col("_cont")
    flags = flags.with_columns(
        (~pl.col("_cont") & ~pl.col("is_blank")).alias("_start"),
        skipped.alias("is_blank"),
    )
    flags = _cap_records(flags, max_lines=max_lines, max_bytes=max_bytes)
    return flags.select(
        pl.exclude("^_.*$"),
        pl.when(pl.col("is_blank")).then(None).otherwise(pl.col("_record")).alias("record"),
        (pl.col("_start") & ~pl.col("_split")).alias("is_header"),
        pl.col("_split").alias("is_split"),
        after_partial.alias("joins_previous"),
    )


def _previous(column: str, brk: pl.Expr) -> pl.Expr:
    """``column`` of the previous non-blank line as ``_prev<column>``: blank lines are masked,
    then the last value before each line is carried forward over them (a blank segment start
    stops the carry)."""
    return (
        pl.when(pl.col("is_blank") & ~brk)
        .then(None)
        .when(pl.col("is_blank"))
        .then(False)
        .otherwise(pl.col(column))
        .shift(1)
        .forward_fill()
        .fill_null(False)
        .alias(f"_prev{column}")
    )


def _cap_records(flags: pl.LazyFrame, *, max_lines: int, max_bytes: int) -> pl.LazyFrame:
    """Start a new record where one would pass ``max_lines`` or ``max_bytes``.

    Positions and byte counts within a record come from running totals minus their value at
    the record's first line (forward-filled), which avoids a per-record window.
    """
    kept = ~pl.col("is_blank")
    size = pl.when(kept).then(pl.col("text").str.len_bytes() + 1).otherwise(0)
    flags = flags.with_columns(
        pl.when(pl.col("_start")).then(pl.col("_i")).forward_fill().alias("_head_i"),
        size.cum_sum().alias("_total"),
        size.alias("_size"),
    )
    flags = flags.with_columns(
        (pl.col("_i") - pl.col("_head_i").fill_null(0)).alias("_pos"),
        (
            pl.col("_total")
            - pl.when(pl.col("_start"))
            .then(pl.col("_total") - pl.col("_size"))
            .forward_fill()
            .fill_null(0)
        ).alias("_cum"),
    )
    piece = pl.max_horizontal(pl.col("_pos") // max_lines, (pl.col("_cum") - 1) // max_bytes)
    split = kept & ~pl.col("_start") & (piece != piece.shift(1)).fill_null(False)
    flags = flags.with_columns(split.alias("_split"))
    flags = flags.with_columns((pl.col("_start") | pl.col("_split")).alias("_start"))
    return flags.with_columns(pl.col("_start").cast(pl.Int64).cum_sum().alias("_record"))
