"""`offline_reader`: how fast the offline responder reads a customer's message, and its cold import.

- `read_query` per message, warm: every user message of the two golden sets and the held-out
  conversations, read once untimed (stems and word indexes are cached), then five timed passes in a
  fresh interpreter; a run reports the best pass (µs per message).
- Cold import of `sommelier.offline.reader` (with the language layer's word lists) in a fresh
  interpreter, timed with perf_counter around the import.

A revision from before the layout change has the reader at `sommelier.agent.offline.reader`: each tree's
reader is imported from where that tree has it.

With `BENCH_READER_BASELINE=<git revision>` the same measurements run on that revision too (unpacked
with `git archive` into the work folder), alternating baseline and working tree sample by sample so both
see the same machine load, and the ratios working tree / baseline are reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.common import ROOT, Context, Figure, figure, log

NAME = "offline_reader"

READER_MODULES = ("sommelier.offline.reader", "sommelier.agent.offline.reader")  # now, and before the move
_IMPORT = "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
_READ = """
import json, sys, time
from {module} import read_query
messages = json.load(open(sys.argv[1], encoding="utf-8"))
for m in messages:
    read_query(m)
best = None
for _ in range(5):
    started = time.perf_counter()
    for m in messages:
        read_query(m)
    per_message = (time.perf_counter() - started) / len(messages)
    best = per_message if best is None else min(best, per_message)
print(best)
"""


def _messages() -> list[str]:
    messages: list[str] = []
    for name in ("golden_set.json", "golden_set_shop.json"):
        path = ROOT / "eval" / name
        if not path.exists():
            continue
        for case in json.loads(path.read_text("utf-8"))["cases"]:
            for turn in case.get("history", []):
                if isinstance(turn, dict) and turn.get("role") == "user":
                    messages.append(str(turn.get("content") or ""))
            messages.append(case["query"])
    holdout = ROOT / "tests" / "data" / "holdout" / "queries.json"
    if holdout.exists():
        for conversation in json.loads(holdout.read_text("utf-8"))["conversations"]:
            messages += [turn["text"] for turn in conversation["turns"]]
    return messages


def reader_module(tree: Path) -> str:
    """The reader's module in this tree (the working tree or an unpacked baseline revision)."""
    for module in READER_MODULES:
        if (tree / "layers" / "sommelier" / (module.replace(".", "/") + ".py")).is_file():
            return module
    raise RuntimeError(f"no offline reader in {tree} (looked for {', '.join(READER_MODULES)})")


def _sample(tree: Path, code: str, *args: str) -> float:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": f"{tree / 'layers' / 'sommelier'}"}
    code = code.replace("{module}", reader_module(tree))
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def _unpack(revision: str, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", revision, "layers/sommelier"], cwd=ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def run(ctx: Context) -> list[Figure]:
    messages = _messages()
    corpus = ctx.workdir / "reader-messages.json"
    corpus.write_text(json.dumps(messages, ensure_ascii=False), "utf-8")
    trees = {"working tree": ROOT}
    baseline = os.environ.get("BENCH_READER_BASELINE")
    if baseline:
        trees = {f"baseline {baseline}": _unpack(baseline, ctx.workdir / "reader-baseline"), **trees}
    import_samples = 1 if ctx.smoke else 5 if ctx.quick else 10
    imports: dict[str, list[float]] = {label: [] for label in trees}
    reads: dict[str, list[float]] = {label: [] for label in trees}
    for _ in range(import_samples):
        for label, tree in trees.items():
            imports[label].append(_sample(tree, _IMPORT) * 1000)
    for _ in range(ctx.runs):
        for label, tree in trees.items():
            reads[label].append(_sample(tree, _READ, str(corpus)) * 1e6)
    log(f"offline_reader: {len(messages)} messages, trees: {', '.join(trees)}")
    details = {"messages": len(messages)}
    figures = []
    for label in trees:
        figures.append(figure(NAME, f"read_query per message ({label})", "µs", reads[label], details=details))
        figures.append(figure(NAME, f"cold import of the reader ({label})", "ms", imports[label]))
    if baseline:
        base, work = f"baseline {baseline}", "working tree"
        for metric, series in (("read_query", reads), ("cold import", imports)):
            ratios = [w / b for w, b in zip(series[work], series[base], strict=True)]
            figures.append(
                figure(NAME, f"{metric}, working tree / baseline", "×", ratios, note="per alternating pair of samples")
            )
    return figures
