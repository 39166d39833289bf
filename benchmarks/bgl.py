"""First alert and culprit node per BlueGene/L alert episode: ``python -m benchmarks.bgl
[--delta 10] [--data DIR] [--record]``.

Prints a markdown section; ``--record`` also puts it into ``benchmarks/RESULTS.md`` (between
the ``bgl`` markers). The labelled benchmark of ``../shared/data/loghub/SOURCE.md`` ("Using it
as a labelled benchmark"), on the loghub BGL 2k sample, with the test-only BGL signatures of
``tests/data/bgl-signatures`` (kernel, I/O-node and ciod alerts as ``root``; frequent FATAL and
INFO non-alert templates as ``context`` or ``noise``). ``tests/diagnose/test_bgl.py`` runs the
same code and asserts floors.

Protocol:

* **Episodes**: the alert lines (first column not ``-``) of ``BGL_2k.log_structured.csv``, split
  where two alerts are more than 1 h apart (SOURCE.md's snippet); 40 episodes, checked against
  ``BGL_2k.first_alert_per_episode.csv`` (first LineId and node of each).
* **Window**: the lines from ``first alert - delta`` to ``last alert + delta`` (``delta`` counted
  in lines, 10 by default: the sample is a sorted random sample across 214 days, so a time
  margin holds almost no other lines), noise lines included, clipped so that it never holds an
  alert line of the episode before or after. The labels are used for this and for scoring only.
* **Input**: each window line with its label column (the first token) stripped, nothing else
  changed, as one ``.log`` file read by culprit's text reader (its ``bgl_ras`` grammar takes
  the time from the epoch seconds and the host from the node field),
  ``api.analyze``-d into a fresh case (nothing is reused between episodes).
* **Modes**: ``text`` analyzes each window as one attempt (``silence_s`` = :data:`SILENCE_S`);
  ``text-default-silence`` keeps culprit's default 600 s silence, which cuts a sparse window
  into several attempts; ``findings.verdict`` is the latest one with a first error.
* **Scores** (per episode, ``x/40``): first-row exact hit@1 (the cited line, mapped back to its
  LineId, is the episode's first alert); culprit-node hit@1 at node, node-card and midplane
  level (``R02-M1-N0-C:J12-U11`` / ``R02-M1-N0`` / ``R02-M1``; culprit lower-cases host names);
  false alerts (the reported first error is a ``-`` line); no answer.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import sys
import tempfile
import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from analyzer import api
from benchmarks import REPO_DIR
from benchmarks.measure import git

LOGHUB_DIR: Final = REPO_DIR.parent / "shared" / "data" / "loghub"
BGL_DIR: Final = LOGHUB_DIR / "BGL"
SIGNATURES_DIR: Final = REPO_DIR / "tests" / "data" / "bgl-signatures"
#: Lines of context before the first and after the last alert of an episode.
DELTA_LINES: Final = 10
#: Two alerts further apart than this start a new episode (SOURCE.md).
EPISODE_GAP_S: Final = 3600
#: A window is one attempt: no silence in the 2k sample is this long (about 116 days).
SILENCE_S: Final = 10_000_000.0
#: mode -> silence between attempts (None: culprit's default); ``text`` is the scored mode.
MODES: Final[dict[str, float | None]] = {
    "text": SILENCE_S,
    "text-default-silence": None,
}
#: Prose width of the RESULTS.md section.
WIDTH: Final = 100
BEGIN: Final = "<!-- bgl:begin -->"
END: Final = "<!-- bgl:end -->"


@dataclass(frozen=True)
class Line:
    """One line of ``BGL_2k.log``: its LineId, label and the raw bytes after the label."""

    line_id: int
    label: str
    stripped: bytes


@dataclass(frozen=True)
class Episode:
    index: int
    #: LineIds of the episode's alert lines, in order.
    alert_ids: tuple[int, ...]
    first_node: str
    #: The window, first and last LineId (inclusive).
    lo: int
    hi: int

    @property
    def first_line_id(self) -> int:
        return self.alert_ids[0]


@dataclass(frozen=True)
class Answer:
    """What culprit said about one episode's window."""

    episode: int
    #: LineId of the verdict's first error, its signature and host; the culprit host.
    line_id: int | None
    signature: str | None
    host: str | None
    culprit: str | None
    #: LineId of the earliest line (in file order) that a root signature matched.
    match_line_id: int | None
    #: The case's rows, and how many of them have a time and a host.
    rows: int
    rows_with_time: int
    rows_with_host: int
    seconds: float


@dataclass(frozen=True)
class Score:
    mode: str
    episodes: int
    first_row: int
    node: int
    node_card: int
    midplane: int
    false_alerts: int
    no_answer: int
    match_first_row: int
    match_false_alerts: int
    rows: int
    rows_with_time: int
    rows_with_host: int
    seconds: float

    @property
    def false_alert_rate(self) -> float:
        return self.false_alerts / self.episodes if self.episodes else 0.0


def read_sample(bgl_dir: Path = BGL_DIR) -> list[Line]:
    """Every line of ``BGL_2k.log``, split into its label and the rest (bytes kept as they are,
    line ending included)."""
    raw = (bgl_dir / "BGL_2k.log").read_bytes().splitlines(keepends=True)
    lines = []
    for number, line in enumerate(raw, start=1):
        label, _, rest = line.partition(b" ")
        lines.append(Line(number, label.decode(), rest))
    return lines


def episodes(bgl_dir: Path = BGL_DIR, delta: int = DELTA_LINES) -> list[Episode]:
    """The alert episodes of the sample and their windows, checked against
    ``BGL_2k.first_alert_per_episode.csv``."""
    with (bgl_dir / "BGL_2k.log_structured.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    alerts = [r for r in rows if r["Label"] != "-"]
    groups: list[list[dict[str, str]]] = []
    for row in alerts:
        if groups and int(row["Timestamp"]) - int(groups[-1][-1]["Timestamp"]) <= EPISODE_GAP_S:
            groups[-1].append(row)
        else:
            groups.append([row])
    bounds = [(int(g[0]["LineId"]), int(g[-1]["LineId"])) for g in groups]
    result = []
    for index, group in enumerate(groups):
        first, last = bounds[index]
        after_previous = bounds[index - 1][1] + 1 if index else 1
        before_next = bounds[index + 1][0] - 1 if index + 1 < len(bounds) else len(rows)
        result.append(
            Episode(
                index=index + 1,
                alert_ids=tuple(int(r["LineId"]) for r in group),
                first_node=group[0]["Node"],
                lo=max(first - delta, after_previous),
                hi=min(last + delta, before_next),
            )
        )
    with (bgl_dir / "BGL_2k.first_alert_per_episode.csv").open(newline="") as handle:
        expected = [
            (int(r["episode"]), int(r["first_line_id"]), r["first_node"])
            for r in csv.DictReader(handle)
        ]
    found = [(e.index, e.first_line_id, e.first_node) for e in result]
    if found != expected:
        raise ValueError("episodes differ from BGL_2k.first_alert_per_episode.csv")
    return result


def write_window(lines: Sequence[Line], path: Path) -> None:
    """The label-stripped lines, bytes as they are."""
    path.write_bytes(b"".join(line.stripped for line in lines))


def run_episode(episode: Episode, sample: Sequence[Line], work: Path, mode: str = "text") -> Answer:
    """Analyze one episode's window in a fresh case under ``work``."""
    silence = MODES[mode]
    work.mkdir(parents=True, exist_ok=True)
    path = work / "bgl.log"
    write_window(sample[episode.lo - 1 : episode.hi], path)
    started = time.perf_counter()
    silence_kw: dict[str, Any] = {} if silence is None else {"silence_s": silence}
    settings = api.AnalyzeSettings(signatures=(SIGNATURES_DIR,), redact=False, **silence_kw)
    result = api.analyze([path], work / "out", settings)
    seconds = time.perf_counter() - started
    verdict = result.findings.verdict
    first = verdict.first_error
    case = work / "out" / "case"
    earliest = api.query(
        case, "SELECT min(line) AS line FROM matches WHERE role = 'root'"
    ).to_pylist()[0]["line"]
    counts = api.query(
        case, "SELECT count(*) AS n, count(ts) AS ts, count(host) AS host FROM rows"
    ).to_pylist()[0]
    return Answer(
        episode=episode.index,
        line_id=None if first is None else episode.lo + first.citation.line - 1,
        signature=None if first is None else first.signature,
        host=None if first is None else first.host,
        culprit=verdict.culprit.host,
        match_line_id=None if earliest is None else episode.lo + int(earliest) - 1,
        rows=int(counts["n"]),
        rows_with_time=int(counts["ts"]),
        rows_with_host=int(counts["host"]),
        seconds=seconds,
    )


def _level(node: str | None, parts: int) -> str | None:
    """``node`` cut to its first ``parts`` dash-separated fields, upper-case (5: the node, 3:
    its node card, 2: its midplane)."""
    return None if node is None else "-".join(node.upper().split("-")[:parts])


def score(
    mode: str, answers: Sequence[Answer], episode_list: Sequence[Episode], sample: Sequence[Line]
) -> Score:
    """The scores of one mode over all episodes."""
    truth = {e.index: e for e in episode_list}
    labels = {line.line_id: line.label for line in sample}

    def hits(parts: int) -> int:
        return sum(
            1
            for a in answers
            if a.culprit is not None
            and _level(a.culprit, parts) == _level(truth[a.episode].first_node, parts)
        )

    return Score(
        mode=mode,
        episodes=len(answers),
        first_row=sum(1 for a in answers if a.line_id == truth[a.episode].first_line_id),
        node=hits(5),
        node_card=hits(3),
        midplane=hits(2),
        false_alerts=sum(1 for a in answers if a.line_id is not None and labels[a.line_id] == "-"),
        no_answer=sum(1 for a in answers if a.line_id is None),
        match_first_row=sum(
            1 for a in answers if a.match_line_id == truth[a.episode].first_line_id
        ),
        match_false_alerts=sum(
            1 for a in answers if a.match_line_id is not None and labels[a.match_line_id] == "-"
        ),
        rows=sum(a.rows for a in answers),
        rows_with_time=sum(a.rows_with_time for a in answers),
        rows_with_host=sum(a.rows_with_host for a in answers),
        seconds=sum(a.seconds for a in answers),
    )


def evaluate(
    mode: str, work: Path, bgl_dir: Path = BGL_DIR, delta: int = DELTA_LINES
) -> tuple[Score, list[Answer]]:
    """Run every episode of ``mode`` (one fresh case each, under ``work``) and score them."""
    sample = read_sample(bgl_dir)
    episode_list = episodes(bgl_dir, delta)
    answers = [
        run_episode(e, sample, work / mode / f"episode-{e.index:02d}", mode) for e in episode_list
    ]
    return score(mode, answers, episode_list, sample), answers


def _ratio(hit: int, total: int) -> str:
    return f"{hit}/{total}"


def _node(hit: int, score: Score) -> str:
    """A node score, or n/a when no row of the mode's cases had a host."""
    return _ratio(hit, score.episodes) if score.rows_with_host else "n/a (no host)"


def table(scores: Sequence[Score]) -> str:
    """The scores as a markdown table, one row per mode."""
    head = (
        "| mode | rows with time / host | first row hit@1 | node hit@1 | node card | midplane "
        "| false alerts (`-` line reported) | no answer | match stage: first row "
        "| match stage: false alerts | analyze s (sum) |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"
    )
    body = "".join(
        f"| {s.mode} | {s.rows_with_time:,} / {s.rows_with_host:,} of {s.rows:,} | "
        f"{_ratio(s.first_row, s.episodes)} | {_node(s.node, s)} | {_node(s.node_card, s)} | "
        f"{_node(s.midplane, s)} | {_ratio(s.false_alerts, s.episodes)} "
        f"({s.false_alert_rate:.2f}) | {_ratio(s.no_answer, s.episodes)} | "
        f"{_ratio(s.match_first_row, s.episodes)} | {_ratio(s.match_false_alerts, s.episodes)} "
        f"| {s.seconds:.1f} |\n"
        for s in scores
    )
    return head + body


def _roles() -> str:
    """How many test-only BGL signatures have each role, e.g. ``10 root, 3 context, 1 noise``."""
    catalogue = api.signatures([SIGNATURES_DIR])
    roles = Counter(
        entry.signature.role
        for entry in catalogue.entries
        if entry.path.is_relative_to(SIGNATURES_DIR)
    )
    return ", ".join(
        f"{roles[role]} {role}" for role in ("root", "secondary", "context", "noise") if roles[role]
    )


def _wrap(paragraph: str) -> str:
    return textwrap.fill(paragraph, WIDTH, break_on_hyphens=False, break_long_words=False)


def section(scores: Sequence[Score], delta: int, date: str, command: str) -> str:
    """The BGL section of RESULTS.md (between its markers)."""
    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "analyzer") or ""
    where = f"`{commit}`" + (" (+ uncommitted changes to `analyzer/`)" if dirty else "")
    count = scores[0].episodes if scores else 0
    intro = (
        f"Measured {date} on commit {where}. Command (from the repository root): "
        f"`{command}`. Data: the loghub BGL 2k sample in `../shared/data/loghub/BGL/` (not in "
        "the repository; see its SOURCE.md). Signatures: the catalogue plus the test-only "
        f"folder `tests/data/bgl-signatures/` ({_roles()}); the test is "
        "`tests/diagnose/test_bgl.py`."
    )
    protocol = (
        f"{count} alert episodes (alerts more than 1 h apart start a new one). Each window runs "
        f"from {delta} lines before the episode's first alert to {delta} lines after its last, "
        "noise lines included, clipped to hold no alert of a neighbouring episode; the label "
        "column is stripped before ingest and each window is analyzed in a fresh case. The "
        "labels only build the windows and score the answers. A false alert is an episode "
        "whose reported first error is a `-` line. Definitions and modes: `benchmarks/bgl.py`."
    )
    lines = [
        BEGIN,
        "## BlueGene/L: first alert and culprit node per alert episode",
        "",
        _wrap(intro),
        "",
        _wrap(protocol),
        "",
        table(scores).rstrip("\n"),
        END,
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bgl", description=__doc__)
    parser.add_argument("--delta", type=int, default=DELTA_LINES, help="lines around an episode")
    parser.add_argument("--data", type=Path, default=BGL_DIR, help="the loghub BGL directory")
    parser.add_argument(
        "--record", action="store_true", help="write the section into benchmarks/RESULTS.md"
    )
    args = parser.parse_args(argv)
    if not (args.data / "BGL_2k.log").is_file():
        print(f"BGL sample not found in {args.data} (it lives in ../shared)", file=sys.stderr)
        return 2
    scores = []
    with tempfile.TemporaryDirectory(prefix="culprit-bgl-") as work:
        for mode in MODES:
            result, _ = evaluate(mode, Path(work), args.data, args.delta)
            scores.append(result)
    command = (
        "python -m benchmarks.bgl"
        + (f" --delta {args.delta}" if args.delta != DELTA_LINES else "")
        + (" --record" if args.record else "")
    )
    text = section(scores, args.delta, dt.date.today().isoformat(), command)
    print(text, end="")
    if args.record:
        from benchmarks.report import put_between

        put_between(text, BEGIN, END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
