"""Every benchmark section runs on tiny sizes (`python -m bench --smoke`), so an interface change breaks the
suite, not the next benchmark run. Figures are not judged here (targets are for BENCHMARKS.md), only that
every section ran without failing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.database, pytest.mark.timeout(600)]


def test_every_bench_section_runs_on_tiny_sizes(tmp_path):
    output = tmp_path / "smoke.json"
    paths = [str(ROOT / "layers" / "sommelier"), str(ROOT / "dev"), str(ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--output", str(output)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=580,
        check=False,
    )
    assert output.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(output.read_text("utf-8"))
    assert result["failures"] == {}, result["failures"]
    assert done.returncode == 0, done.stderr[-3000:]
    ran = set(result["benchmark_seconds"])
    skipped = {name for name, notes in result["notes"].items() if any(n.startswith("skipped") for n in notes)}
    from bench.__main__ import BENCHMARKS

    assert set(BENCHMARKS) == ran | skipped, "every section ran or said why it was skipped"
    assert {f["benchmark"] for f in result["figures"]} >= ran - {"langchain"}
