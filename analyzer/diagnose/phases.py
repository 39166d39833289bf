"""The training phase an attempt failed in, and the last step each host completed (rule
``training-phase``, inferred; the *temporal* pattern of L4, Jiang et al., FSE 2025).

Training goes through phases: launch, initialisation, compilation, data loading, iterations
(steps), checkpointing, teardown. Progress lines say which one a host is in ("Compiling…",
"completed step 120", "Saved checkpoint"). Each template of the attempt gets the phase its
text names (:data:`PHASES`, the first pattern that matches), and the attempt failed in the
phase of the last progress line logged before the failure moment (the first error, else the
first lead, else the attempt's end). The last completed step of each host is read from its
last line reporting a completed step (``completed step: 120``, ``step 120 … loss``), and
the rows that say so are cited. Prefetching the next batch between steps is still the step
phase once a step has completed.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

import polars as pl

from analyzer.diagnose.draft import MAX_CITED, Context, PhaseDraft, message, when
from analyzer.diagnose.findings import Message

#: (phase, pattern over the template text), first match wins.
PHASES: Final = (
    ("checkpoint", r"(?i)checkpoint|\bsav(?:ed|ing)\b.{0,30}\b(?:model|state|weights)\b"),
    (
        "data",
        r"(?i)dataset|data ?loader|input pipeline|tfrecord|loading data|prefetch|shards?\b",
    ),
    ("step", r"(?i)\b(?:step|iteration|iter|global_step|epoch)\b|\bloss\b"),
    ("compile", r"(?i)compil|\bjit\b|\bhlo\b"),
    (
        "init",
        r"(?i)initiali[sz]|coordination service|rendezvous|\bbackend\b|\bdevices?\b"
        r"|process index|distributed",
    ),
    ("launch", r"(?i)(?:start|creat)(?:ed|ing) container|pull(?:ed|ing)\b|scheduled|launch"),
    ("teardown", r"(?i)shutting down|shutdown|\bexit(?:ing|ed)?\b|finished training"),
)
#: Templates that report a completed step (preferred over any line naming a step).
_COMPLETED: Final = (
    r"(?i)(?:complet|finish|done|end of).{0,20}\b(?:step|iteration|iter)\b"
    r"|\b(?:step|iteration|iter)\b.{0,60}\bloss\b|\bloss\b.{0,60}\b(?:step|iteration|iter)\b"
)
#: The step number in a step line.
_STEP_NUMBER: Final = r"(?i)\b(?:step|iteration|iter|global_step)\b\D{0,3}(\d+)"
RULE: Final = "training-phase"


def phase_expr(template: pl.Expr) -> pl.Expr:
    """The phase a template's text names (null when none)."""
    expr: pl.Expr = pl.lit(None, dtype=pl.String)
    for name, pattern in reversed(PHASES):
        expr = pl.when(template.str.contains(pattern)).then(pl.lit(name)).otherwise(expr)
    return expr


def _moment(context: Context, first_error: dict[str, object] | None, leads: list[int]) -> int:
    """When the attempt failed (ns): its first error, else its first lead, else its end."""
    if first_error is not None and isinstance(first_error.get("ts"), dt.datetime):
        value = first_error["ts"]
        assert isinstance(value, dt.datetime)
        return int(value.timestamp() * 1e9)
    table = context.templates
    if leads and table is not None:
        row = table.filter(pl.col("first_row") == leads[0])
        if row.height and row["first_ts"][0] is not None:
            return int(row["first_ts"].dt.epoch("ns")[0])
    return context.attempt.end or 0


def training_phase(
    context: Context, first_error: dict[str, object] | None, leads: list[int]
) -> PhaseDraft | None:
    """The phase of the attempt's failure, with each host's last completed step."""
    table = context.templates
    rows = context.template_rows
    if table is None or rows is None or table.height == 0 or context.attempt.end is None:
        return None
    start = context.attempt.start or 0
    moment = _moment(context, first_error, leads)
    phased = (
        # A progress line says no word of failure (its severity may be ERROR: a container's
        # whole stderr is, in Cloud Logging).
        table.filter(pl.col("error_rank").is_null() | (pl.col("error_rank") == 2))
        .select("template_id", "template")
        .unique("template_id")
        .with_columns(phase_expr(pl.col("template")).alias("phase"))
        .filter(pl.col("phase").is_not_null() & (pl.col("phase") != "teardown"))
    )
    if phased.height == 0:
        return None
    last = (
        rows.filter(
            pl.col("template_id").is_in(phased["template_id"].implode())
            & pl.col("ts").dt.epoch("ns").is_between(start, moment)
        )
        .sort("ts", "row_id")
        .tail(1)
        .collect()
    )
    if last.height == 0:
        return None
    last = last.join(phased, on="template_id")
    phase, template = str(last["phase"][0]), str(last["template"][0])
    steps = _last_steps(context, rows, phased, start, context.attempt.end)
    step = max((s for _, s, _ in steps), default=None)
    if phase == "data" and step is not None:
        # Batches are prefetched between steps: once a step completed, training was on.
        phase = "step"
    where = f"step {step}" if phase == "step" and step is not None else phase
    where_message = (
        message("phase.where.step", step=step)
        if phase == "step" and step is not None
        else message(f"phase.name.{phase}")
    )
    text = (
        f"Attempt {context.attempt.index} failed in the {phase} phase ({where}): the last "
        f"progress line before the failure ({template!r}) was logged at {when(last['ts'][0])}"
    )
    steps_message: str | Message = ""
    if steps:
        low = min(s for _, s, _ in steps)
        text += (
            f"; the last completed step per host runs from {low} to {step} over "
            f"{len(steps)} host(s)"
        )
        steps_message = message(
            "phase.steps", low=low, step=step if step is not None else low, hosts=len(steps)
        )
    said = message(
        "phase.failed",
        attempt=context.attempt.index,
        phase=message(f"phase.name.{phase}"),
        where=where_message,
        template=repr(template),
        time=when(last["ts"][0]),
        steps=steps_message,
    )
    cited = [int(last["row_id"][0])]
    lagging = sorted(steps, key=lambda item: (item[1], str(item[0])))
    cited += [row for _, _, row in lagging[: MAX_CITED - 1]]
    return PhaseDraft(phase, step, text + ".", cited, steps, said)


def _last_steps(
    context: Context, rows: pl.LazyFrame, phased: pl.DataFrame, start: int, end: int
) -> list[tuple[str | None, int, int]]:
    """(host, step, row id) of each host's last step line in the attempt."""
    stepped = phased.filter(pl.col("template").str.contains(_COMPLETED))
    if stepped.height == 0:
        return []
    last_rows = (
        rows.filter(
            pl.col("template_id").is_in(stepped["template_id"].implode())
            & pl.col("ts").dt.epoch("ns").is_between(start, end)
        )
        .group_by("host")
        .agg(pl.col("row_id").sort_by("ts", "row_id").last())
        .collect()
    )
    if last_rows.height == 0:
        return []
    ids = last_rows["row_id"].to_list()
    found = (
        context.data.rows()
        .select("row_id", pl.col("host").cast(pl.String), "message")
        .filter(pl.col("row_id").is_in(ids))
        .with_columns(
            pl.col("message").str.extract(_STEP_NUMBER, 1).cast(pl.Int64, strict=False).alias("n")
        )
        .filter(pl.col("n").is_not_null())
        .sort("host", "row_id", nulls_last=True)
        .collect()
    )
    return [
        (host, int(n), int(row_id))
        for row_id, host, n in found.select("row_id", "host", "n").rows()
    ]
