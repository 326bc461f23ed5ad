"""docs/architecture.md lists the files one offline Telegram turn passes through: the list is the trace's.

The trace (scripts/trace_turn.py) builds the bot as `sommelier serve` does, on a database of the shipped
catalogue and the fake Bot API, and profiles a warm offline recommendation turn in every thread.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
LISTED = re.compile(r"<!-- trace:begin -->\n(.*?)<!-- trace:end -->", re.DOTALL)


def load_trace_script():
    spec = importlib.util.spec_from_file_location("trace_turn_under_test", ROOT / "scripts" / "trace_turn.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def documented_files() -> list[str]:
    block = LISTED.search(ARCHITECTURE.read_text("utf-8"))
    assert block, "docs/architecture.md has no trace block"
    return re.findall(r"^- `([^`]+)`", block.group(1), re.MULTILINE)


def traced_in_a_fresh_process(database_url: str) -> list[str]:
    """As the script prints it: the suite's process has warmed caches (lemmas, searches) a turn would fill."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "trace_turn.py"), "--json", database_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_documented_files_are_the_traced_ones(fresh_db):
    files = traced_in_a_fresh_process(fresh_db.conninfo)
    assert len(files) >= 15, "a turn passes through the consumer, the agent, the responder and the SQL"
    assert "sommelier/offline/responder.py" in files and "sommelier/telegram/consumer.py" in files
    assert documented_files() == files, "update docs/architecture.md: .venv/bin/python scripts/trace_turn.py"


def test_the_trace_sees_only_the_deployed_package(fresh_db):
    trace = load_trace_script().trace_offline_turn(fresh_db.conninfo)
    assert all(name.startswith("sommelier/") for name in trace.files)
    assert not any("sommelier_dev" in name or "openai" in name for name in trace.files)
