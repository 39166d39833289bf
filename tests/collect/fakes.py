"""Fake ``kubectl``, ``gcloud``, ``hcloud`` and ``curl`` for the collection tests.

One stdlib-only Python script, installed under each name in ``tmp_path/bin`` (first on PATH).
It reads the rules of ``$CULPRIT_FAKE_CLOUD/rules.json``, appends every call (argv and the
one environment variable the tests pass through) to ``calls.jsonl``, and answers with the
first rule whose words all appear in its argv and whose substrings all appear in the joined
argv: replayed output, or a failure (``fail_times`` failures first, then success: a quota
refused once). Arguments no rule expects fail with exit 2, so a command culprit spells wrong
shows up as a failed step.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

TOOLS = ("kubectl", "gcloud", "hcloud", "curl")
#: The environment variable the fakes record: the tests check it reaches them untouched.
PASSED: str = "CULPRIT_TEST_PASSTHROUGH"

SCRIPT = r"""
import json, os, sys, time
from pathlib import Path

home = Path(os.environ["CULPRIT_FAKE_CLOUD"])
tool = Path(sys.argv[0]).name
args = sys.argv[1:]
joined = " ".join(args)
with open(home / "calls.jsonl", "a", encoding="utf-8") as log:
    log.write(json.dumps({"tool": tool, "argv": args,
                          "passed": os.environ.get("CULPRIT_TEST_PASSTHROUGH")}) + "\n")
rules = json.loads((home / "rules.json").read_text(encoding="utf-8"))
for number, rule in enumerate(rules):
    if rule["tool"] != tool:
        continue
    if not all(w in args for w in rule["words"]) or not all(s in joined for s in rule["contains"]):
        continue
    if rule["sleep"]:
        # Count the fakes running at once (the collection's concurrency limit).
        running = home / "running"
        running.mkdir(exist_ok=True)
        mine = running / str(os.getpid())
        mine.touch()
        now_running = len(list(running.iterdir()))
        with open(home / "overlap.log", "a") as log:
            log.write(f"{now_running}\n")
        time.sleep(rule["sleep"])
        mine.unlink()
    count_file = home / f"count-{number}"
    count = int(count_file.read_text()) if count_file.exists() else 0
    count_file.write_text(str(count + 1))
    if count < rule["fail_times"]:
        sys.stderr.write(rule["fail_stderr"])
        sys.exit(rule["fail_exit"])
    if rule["stdout"] is not None:
        sys.stdout.buffer.write((home / rule["stdout"]).read_bytes())
    sys.stdout.buffer.write(rule["text"].encode())
    sys.stderr.write(rule["stderr"])
    sys.exit(rule["exit"])
sys.stderr.write(f"fake {tool}: no rule for: {joined}\n")
sys.exit(2)
"""


@dataclass
class Rule:
    """One answer of a fake tool (see the module docstring)."""

    tool: str
    words: list[str]
    contains: list[str] = field(default_factory=list)
    stdout: str | None = None
    text: str = ""
    exit: int = 0
    stderr: str = ""
    fail_times: int = 0
    fail_exit: int = 1
    fail_stderr: str = ""
    sleep: float = 0.0


class FakeCloud:
    """The fakes' folder: rules, replayed files and the calls log."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.files = root / "files"
        self.rules: list[Rule] = []
        self.files.mkdir(parents=True, exist_ok=True)
        self.bin.mkdir(parents=True, exist_ok=True)
        for tool in TOOLS:
            path = self.bin / tool
            path.write_text(f"#!{sys.executable} -S\n{SCRIPT}", encoding="utf-8")
            path.chmod(0o755)
        self.add(Rule("kubectl", ["version", "--client"], text="Client Version: v1.31.2-fake\n"))
        self.add(Rule("gcloud", ["version"], text="Google Cloud SDK 520.0.0 (fake)\n"))
        self.add(Rule("hcloud", ["version"], text="Current KooCLI version: 3.2.8 (fake)\n"))
        self.add(Rule("curl", ["--version"], text="curl 8.5.0 (fake)\n"))

    def file(self, name: str, data: bytes | str) -> str:
        """Store a replayed output; its name for :attr:`Rule.stdout`."""
        path = self.files / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return f"files/{name}"

    def add(self, rule: Rule) -> Rule:
        self.rules.append(rule)
        self.save()
        return rule

    def first(self, rule: Rule) -> Rule:
        """Add ``rule`` before every other (a failure overriding a replay)."""
        self.rules.insert(0, rule)
        self.save()
        return rule

    def find(self, tool: str, *contains: str) -> Rule:
        """The first rule of ``tool`` whose words or substrings mention every ``contains``."""
        for rule in self.rules:
            said = " ".join([*rule.words, *rule.contains])
            if rule.tool == tool and all(c in said for c in contains):
                return rule
        raise LookupError(f"no {tool} rule mentions {contains}")

    def save(self) -> None:
        (self.root / "rules.json").write_text(
            json.dumps([asdict(r) for r in self.rules], indent=1), encoding="utf-8"
        )
        for stale in self.root.glob("count-*"):
            stale.unlink()

    def calls(self) -> list[dict[str, Any]]:
        path = self.root / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def most_at_once(self) -> int:
        """The most sleeping fakes that ran at the same time."""
        path = self.root / "overlap.log"
        return max((int(x) for x in path.read_text().split()), default=0) if path.exists() else 0

    def forget_calls(self) -> None:
        (self.root / "calls.jsonl").unlink(missing_ok=True)

    def environ(self) -> dict[str, str]:
        """The environment a subprocess needs to use the fakes."""
        return {
            **os.environ,
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "CULPRIT_FAKE_CLOUD": str(self.root),
            PASSED: "passed-through",
        }


@pytest.fixture
def fake_cloud(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCloud:
    """Fake CLIs first on PATH for this test."""
    cloud = FakeCloud(tmp_path / "cloud")
    monkeypatch.setenv("PATH", f"{cloud.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("CULPRIT_FAKE_CLOUD", str(cloud.root))
    monkeypatch.setenv(PASSED, "passed-through")
    return cloud
