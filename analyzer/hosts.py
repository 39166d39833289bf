"""One host, one name: aliases of a physical host across sources, resolved from rows.

A host appears under many names: the GKE node name, the GCE instance name and its numeric
instance ID, the pods scheduled on it, the pod hostname JobSet gives each pod (and the
headless-service address built on it), an IP, the TPU worker index and the JAX task number,
a ModelArts ``worker-N``, a physical chip location. Each mapping is taken from a row that
shows both names together (a container log line with its pod and node, an audit entry with
an instance ID and name, a kubelet line naming a pod on its node), and keeps the row that
proved it. An alias that rows tie to two different hosts is a conflict: it is reported and
never used.

``rows.host`` holds the canonical id: the node/instance name where one is known, otherwise
the name the logs used (an IP, a worker).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import polars as pl

#: ``<jobset>-<replicatedJob>-<jobIndex>-<podIndex>-<5 random>`` (Indexed Job pod of a JobSet).
#: Defined here, below ingest, because both the host map (pod hostnames) and the readers
#: (workload and worker of a pod, pod names in file names) read pod names this way.
POD_NAME: Final = r"^(?P<base>.+)-(?P<job>\d+)-(?P<idx>\d+)-(?P<sfx>[a-z0-9]{5})$"

#: Kinds of alias, in the order a host's aliases are listed.
KINDS: Final = (
    "node",
    "instance_id",
    "ip",
    "pod",
    "pod_hostname",
    "worker",
    "task",
    "chip",
)

HOSTS_SCHEMA: Final = {
    "host": pl.String,
    "alias": pl.String,
    "kind": pl.String,
    "file_id": pl.Int32,
    "line": pl.Int32,
    "row_id": pl.Int64,
    "rows": pl.UInt32,
    "conflict": pl.Boolean,
}

_IP: Final = r"^\d{1,3}(?:\.\d{1,3}){3}$"
_INSTANCE_ID: Final = r"^\d{10,20}$"
_CHIP: Final = r"(?:Physical location: |\[/dev/accel\d+ )(tpu\d+:pe\d+:\d+)"
_ADDRESS: Final = re.compile(r"^(?P<name>[^.:/\s]+)(?:\.[^:/\s]*)?(?::\d+)?$")


def _kind_of_host(host: pl.Expr) -> pl.Expr:
    return (
        pl.when(host.str.contains(_IP))
        .then(pl.lit("ip"))
        .when(host.str.contains(_INSTANCE_ID))
        .then(pl.lit("instance_id"))
        .otherwise(pl.lit("node"))
    )


def _worker_key(prefix: str, index: pl.Expr) -> pl.Expr:
    """``worker:<workload>#<attempt>:<slice>/<index>``: pods move between restart attempts,
    so a worker index only names a host within one attempt of one workload."""
    return pl.concat_str(
        [
            pl.lit(prefix),
            pl.col("workload"),
            pl.lit("#"),
            pl.col("attempt").cast(pl.String).fill_null("-"),
            pl.lit(":"),
            index,
        ]
    )


#: Columns of a row that decide its canonical host (:func:`canonical_host`).
HOST_COLUMNS: Final = ("host", "pod", "workload", "slice", "worker", "attempt")
#: Columns of the rows that alias evidence is derived from (small ones only).
EVIDENCE_COLUMNS: Final = ("row_id", "file_id", "line", *HOST_COLUMNS)


def chip_location(message: pl.Expr) -> pl.Expr:
    """The physical TPU chip location a line names as its own (``Physical location: …``)."""
    return message.str.extract(_CHIP, 1)


def _worker_alias() -> pl.Expr:
    """``worker:<workload>#<attempt>:<slice>/<worker>`` of a row."""
    index = pl.concat_str(
        [
            pl.col("slice").cast(pl.String).fill_null("0"),
            pl.lit("/"),
            pl.col("worker").cast(pl.String),
        ]
    )
    return _worker_key("worker:", index)


def evidence(rows: pl.LazyFrame, named: pl.DataFrame | None = None) -> pl.LazyFrame:
    """(alias, kind, host) pairs with the first row that shows them together and a count.

    ``rows`` needs :data:`EVIDENCE_COLUMNS`. ``named`` holds aliases readers found in the
    content of rows (an instance ID next to its name, a chip location): columns ``row_id``,
    ``file_id``, ``line``, ``host``, ``alias``, ``kind``.
    """
    # Millions of rows share a few distinct (host, pod, workload, …) combinations: collapse
    # them first, so memory follows the number of combinations rather than of rows.
    combination = list(HOST_COLUMNS)
    hosted = rows.filter(pl.col("host").is_not_null()).with_columns(
        pl.col("row_id").cast(pl.Int64),
        pl.col("file_id").cast(pl.Int32),
        pl.col("line").cast(pl.Int32),
        pl.col("host").cast(pl.String),
        pl.col("pod").cast(pl.String),
        pl.col("workload").cast(pl.String),
    )
    # Collected once: the pairs below all derive from it.
    hosted = (
        hosted.group_by(combination).agg(*_first_row(), pl.len().alias("rows")).collect().lazy()
    )
    base = ["row_id", "file_id", "line", "host", "rows"]
    pairs = [
        hosted.select(
            *base, pl.col("host").alias("alias"), _kind_of_host(pl.col("host")).alias("kind")
        ),
        hosted.filter(pl.col("pod").is_not_null()).select(
            *base, pl.col("pod").alias("alias"), pl.lit("pod").alias("kind")
        ),
        hosted.filter(pl.col("pod").str.contains(POD_NAME)).select(
            *base,
            pl.col("pod").str.replace(r"-[a-z0-9]{5}$", "").alias("alias"),
            pl.lit("pod_hostname").alias("kind"),
        ),
        hosted.filter(pl.col("workload").is_not_null() & pl.col("worker").is_not_null()).select(
            *base,
            _worker_alias().alias("alias"),
            pl.lit("worker").alias("kind"),
        ),
        # JAX process index (the TSL task number): slice * workers per slice + worker.
        hosted.filter(pl.col("workload").is_not_null() & pl.col("worker").is_not_null())
        .with_columns((pl.col("worker").max().over("workload", "attempt") + 1).alias("_per_slice"))
        .select(
            *base,
            _worker_key(
                "task:",
                (
                    pl.col("slice").fill_null(0).cast(pl.Int64) * pl.col("_per_slice")
                    + pl.col("worker")
                ).cast(pl.String),
            ).alias("alias"),
            pl.lit("task").alias("kind"),
        ),
    ]
    if named is not None and named.height:
        pairs.append(
            named.lazy().select(
                pl.col("row_id").cast(pl.Int64),
                pl.col("file_id").cast(pl.Int32),
                pl.col("line").cast(pl.Int32),
                pl.col("host").cast(pl.String),
                pl.lit(1, dtype=pl.UInt32).alias("rows"),
                pl.col("alias").cast(pl.String),
                pl.col("kind").cast(pl.String),
            )
        )
    return (
        pl.concat(pairs, how="vertical")
        .filter(pl.col("alias").is_not_null() & (pl.col("alias").str.len_bytes() > 0))
        .group_by("alias", "kind", "host")
        .agg(*_first_row(), pl.col("rows").sum().cast(pl.UInt32))
    )


def _first_row() -> tuple[pl.Expr, ...]:
    """Aggregations: a group's earliest row (``row_id``) with its file and line.

    ``min_by`` rather than ``sort_by().first()``, which holds every row of a group.
    """
    return (
        pl.col("row_id").min(),
        pl.col("file_id").min_by("row_id"),
        pl.col("line").min_by("row_id"),
    )


@dataclass(frozen=True)
class HostMap:
    """The resolved aliases of a case (``table`` has :data:`HOSTS_SCHEMA`)."""

    table: pl.DataFrame

    @property
    def conflicts(self) -> pl.DataFrame:
        """Aliases that rows tie to more than one host (never used to resolve)."""
        return self.table.filter(pl.col("conflict"))

    def mapping(self) -> dict[str, str]:
        """alias -> canonical host, for unambiguous aliases."""
        return self._mapping

    @functools.cached_property
    def _mapping(self) -> dict[str, str]:
        # Built once: a diagnosis resolves many names against tens of thousands of aliases.
        usable = self.table.filter(~pl.col("conflict"))
        return dict(usable.select("alias", "host").iter_rows())

    @functools.cached_property
    def task_workloads(self) -> tuple[str, ...]:
        """The workloads whose JAX tasks the map knows (``task:<workload>#…`` aliases)."""
        tasks = self.table.filter(pl.col("kind") == "task")["alias"].to_list()
        return tuple(sorted({alias.split(":", 1)[1].rsplit("#", 1)[0] for alias in tasks}))

    def worker(
        self, workload: str, attempt: int | None, slice_index: int, worker: int
    ) -> str | None:
        """The host of worker ``worker`` of slice ``slice_index`` (a Megascale
        ``slice<S>-task<H>``, a ModelArts ``worker-N``)."""
        key = f"worker:{workload}#{'-' if attempt is None else attempt}:{slice_index}/{worker}"
        return self.mapping().get(key)

    def task(self, workload: str, attempt: int | None, number: int) -> str | None:
        """The host that ran JAX task ``number`` (``/job:jax_worker/replica:0/task:N``)."""
        key = f"task:{workload}#{'-' if attempt is None else attempt}:{number}"
        return self.mapping().get(key)

    def lookup(self, name: str) -> str | None:
        """The canonical host a name stands for: an alias as such, or a network address
        (``pod-hostname.service:8471``) reduced to its first label."""
        table = self.mapping()
        if name in table:
            return table[name]
        match = _ADDRESS.match(name.strip())
        if match and match.group("name") in table:
            return table[match.group("name")]
        return None


def resolve(pairs: pl.DataFrame) -> HostMap:
    """Canonical hosts from evidence pairs.

    A host value that is itself an alias of a named host (an instance ID or IP in the
    ``host`` column that an audit row ties to a node name) is replaced by that name, so every
    alias points at the best name known.
    """
    if pairs.height == 0:
        return HostMap(pl.DataFrame(schema=HOSTS_SCHEMA))
    # Names of hosts that other names resolve to: a node name wins over an ID or IP.
    numeric = pairs.filter(
        pl.col("kind").is_in(["instance_id", "ip"]) & (pl.col("alias") != pl.col("host"))
    )
    upgrade = (
        numeric.filter(_kind_of_host(pl.col("host")) == "node")
        .group_by("alias")
        .agg(pl.col("host").unique().alias("names"))
        .filter(pl.col("names").list.len() == 1)
        .select(pl.col("alias").alias("host"), pl.col("names").list.first().alias("named"))
    )
    pairs = (
        pairs.join(upgrade, on="host", how="left")
        # A row that shows only the ID as its host proves nothing about the name; the row
        # that shows both is the evidence.
        .filter(pl.col("named").is_null() | (pl.col("alias") != pl.col("host")))
        .with_columns(pl.coalesce(pl.col("named"), pl.col("host")).alias("host"))
        .drop("named")
        .group_by("alias", "kind", "host")
        .agg(
            pl.col("row_id").min(),
            pl.col("file_id").sort_by("row_id").first(),
            pl.col("line").sort_by("row_id").first(),
            pl.col("rows").sum(),
        )
    )
    hosts_per_alias = pairs.group_by("alias").agg(pl.col("host").n_unique().alias("_hosts"))
    table = (
        pairs.join(hosts_per_alias, on="alias")
        .with_columns((pl.col("_hosts") > 1).alias("conflict"))
        .drop("_hosts")
        .with_columns(pl.col("kind").cast(pl.Enum(KINDS)).alias("_order"))
        .sort("host", "_order", "alias")
        .drop("_order")
        .select(list(HOSTS_SCHEMA))
        .cast(HOSTS_SCHEMA)  # type: ignore[arg-type]
    )
    return HostMap(table)


def canonical_host(frame: pl.DataFrame, host_map: HostMap) -> pl.Series:
    """The canonical ``host`` for each row of ``frame``: its own host resolved, else the host
    its pod, or its worker index, names unambiguously."""
    aliases = host_map.table.filter(~pl.col("conflict")).select("alias", "host")
    if aliases.height == 0:
        return frame["host"].cast(pl.String)
    lookup = dict(aliases.iter_rows())
    host = frame["host"].cast(pl.String)
    pod = frame["pod"].cast(pl.String)
    worker = frame.select(
        pl.when(pl.col("workload").is_not_null() & pl.col("worker").is_not_null()).then(
            _worker_alias()
        )
    ).to_series()
    resolved = pl.select(
        pl.coalesce(
            host.replace_strict(lookup, default=host, return_dtype=pl.String),
            pod.replace_strict(lookup, default=None, return_dtype=pl.String),
            worker.replace_strict(lookup, default=None, return_dtype=pl.String),
        )
    ).to_series()
    return resolved.rename("host")


def describe(host_map: HostMap) -> Iterable[tuple[str, list[tuple[str, str]]]]:
    """(host, [(kind, alias), …]) for display, hosts in order."""
    for (host,), group in host_map.table.filter(~pl.col("conflict")).group_by(
        "host", maintain_order=True
    ):
        yield str(host), list(group.select("kind", "alias").iter_rows())
