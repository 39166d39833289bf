"""The shape of the code: small modules, an import graph without cycles, and a layers contract
that covers every part of ``analyzer/`` (ARCHITECTURE.md describes the layers)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 600


@pytest.mark.parametrize("package", ["analyzer", "benchmarks"])
def test_no_module_is_longer_than_the_limit(package: str) -> None:
    too_long = {
        str(path.relative_to(ROOT)): count
        for path in sorted((ROOT / package).rglob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}, f"split these modules (limit {MAX_MODULE_LINES} lines): {too_long}"


def _strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative (the graph has a few hundred nodes)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(edges[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


def test_strongly_connected_finds_a_cycle() -> None:
    # The checker itself: a three-module loop is one component, a tail is not part of it.
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [c for c in _strongly_connected(edges) if len(c) > 1] == [{"a", "b", "c"}]


def test_the_import_graph_of_analyzer_has_no_cycle() -> None:
    # grimp reads every import statement, those inside functions included.
    graph = grimp.build_graph("analyzer", include_external_packages=False)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    cycles = [sorted(c) for c in _strongly_connected(edges) if len(c) > 1]
    assert cycles == []


def test_the_layers_contract_covers_every_part_of_analyzer() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    in_layers = {name.strip() for layer in layers for name in layer.split("|")}
    parts = {
        f"analyzer.{p.stem if p.is_file() else p.name}"
        for p in (ROOT / "analyzer").iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()
    }
    assert parts - in_layers == set(), "add these to the layers in pyproject.toml"


def test_the_map_in_architecture_md_matches_the_tree() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = {
        p.name
        for p in (ROOT / "analyzer").rglob("*.py")
        if p.name != "__init__.py" and (p.name != "__main__.py" or p.parent.name == "analyzer")
    }
    packages = {
        f"{p.name}/" for p in (ROOT / "analyzer").rglob("*") if (p / "__init__.py").exists()
    }
    unmapped = sorted(
        name for name in modules | packages if f"`{name}" not in text and f" {name}" not in text
    )
    assert unmapped == [], "name these in ARCHITECTURE.md's map"
    cited = set(re.findall(r"`(analyzer/[\w/.]+)`", text))
    missing = sorted(path for path in cited if not (ROOT / path.rstrip("/")).exists())
    assert missing == [], "ARCHITECTURE.md names paths that do not exist"


#: What the analysis of a small text log has no use for: the cluster engine, the dashboard,
#: DuckDB (JSON readers and the duckdb backend), detect-secrets (a secret-looking text), the
#: other matching backends and the catalogue's lint, the HTML report, rich (no progress bar
#: drawn: stderr is no terminal; a plain verdict is printed as is), numpy.ma (numpy arrays
#: become columns without polars' numpy path), xml.sax (timeline.svg escapes its own text) and
#: the commands of other workflows.
NOT_FOR_A_SMALL_ANALYSIS = (
    "numpy.ma",
    "xml.sax",
    "ray",
    "starlette",
    "uvicorn",
    "jinja2",
    "duckdb",
    "detect_secrets",
    "rich",
    "analyzer.signatures.backends.duckdb",
    "analyzer.signatures.lint",
    "analyzer.signatures.examples",
    "analyzer.report.html",
    "analyzer.serve",
    "analyzer.collect",
    "analyzer.replay",
    "analyzer.provenance.verify",
    "analyzer.flows.received",
    "analyzer.flows.diff",
)


def test_analyzing_a_small_text_log_imports_only_what_it_uses(tmp_path: Path) -> None:
    # Start-up is most of a small analysis: a module imported "just in case" costs every run.
    # A fresh interpreter runs the command as `culprit analyze LOG -o OUT` would.
    log = tmp_path / "worker.log"
    lines = (ROOT / "tests" / "samples" / "text" / "jax_worker.log").read_text().splitlines()
    log.write_text("\n".join(lines[:10]) + "\n")
    script = (
        "import sys\n"
        "from analyzer.cli import main\n"
        f"sys.argv = ['culprit', 'analyze', {str(log)!r}, '-o', {str(tmp_path / 'out')!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "print(sorted(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded = set(ast.literal_eval(done.stdout.splitlines()[-1]))
    assert (tmp_path / "out" / "findings.json").is_file()
    assert "analyzer.signatures.backends.polars" in loaded
    unneeded = sorted(
        name
        for name in loaded
        if any(name == m or name.startswith(f"{m}.") for m in NOT_FOR_A_SMALL_ANALYSIS)
    )
    assert unneeded == []
