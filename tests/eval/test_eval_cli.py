"""`sommelier eval` as a real subprocess against a test database: outputs and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(180)

CLI = [sys.executable, "-m", "sommelier_dev.cli.main", "eval"]
PROVIDER_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "EMBEDDING_PROVIDER",
    "EMBEDDING_MODEL",
    "EMBEDDING_API_KEY",
    "EMBEDDING_BASE_URL",
    "TOOL_FUNCTION_NAME",
    "LLM_MODEL",
)
SUBSET = ("--case", "price-01", "--case", "mood-02", "--case", "follow-02", "--case", "inj-01")


@pytest.fixture(scope="module")
def cli(eval_db, tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    env.update(
        DATABASE_URL=eval_db.conninfo,
        SOMMELIER_STATE_DIR=str(tmp_path_factory.mktemp("eval-state")),
        PYTHONIOENCODING="utf-8",
    )

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*CLI, *args], capture_output=True, text=True, encoding="utf-8", timeout=120, env=env)

    return run


def test_a_subset_meets_the_thresholds_and_writes_three_files(cli, tmp_path):
    done = cli(*SUBSET, "--quiet", "--output-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "mode offline" in done.stderr and "all thresholds met" in done.stderr
    assert done.stdout == "", "reports go to files; nothing (no EMF metrics either) on stdout"
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert [c["score"]["id"] for c in report["cases"]] == ["price-01", "mood-02", "follow-02", "inj-01"]
    assert report["meta"]["command"].startswith("sommelier eval --case price-01")
    assert report["meta"]["database"] == "DATABASE_URL" and report["thresholds"]["passed"]
    follow = report["cases"][2]
    assert follow["history_turns"][0]["text"] == "Что-нибудь к курице до 2000"
    assert follow["turn"]["tool_calls"], "the evaluated turn's tool calls are in the report"
    assert "# Sommelier evaluation — offline" in (tmp_path / "summary.md").read_text("utf-8")
    assert (tmp_path / "categories.png").read_bytes()[:4] == b"\x89PNG"


def test_a_missed_threshold_exits_1(cli, tmp_path):
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps({"targets": {"latency_ms_p50": {"max": 0.0}}}), "utf-8")
    done = cli("--case", "price-01", "--quiet", "--thresholds", str(strict), "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 1, done.stderr
    assert "thresholds missed: latency_ms_p50" in " ".join(done.stderr.split())
    assert json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))["thresholds"]["passed"] is False


def test_setup_errors_exit_2(cli, tmp_path):
    assert cli("--golden", str(tmp_path / "missing.json")).returncode == 2
    assert cli("--case", "no-such-case").returncode == 2
    assert cli("--model", "gpt-4o-mini", "--case", "price-01").returncode == 2, "a model needs OPENAI_API_KEY"


def test_the_shop_golden_set_runs_with_its_own_bounds(cli, tmp_path):
    """`--golden eval/golden_set_shop.json` picks that set's bounds from eval/thresholds.json (golden_sets)."""
    from sommelier.settings import project_root

    shop = project_root() / "eval" / "golden_set_shop.json"
    done = cli("--golden", str(shop), "--case", "shop-type-01", "--quiet", "--output-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["meta"]["golden_set"] == "eval/golden_set_shop.json"
    own = {r["metric"]: r for r in report["thresholds"]["rows"] if r.get("why")}
    assert own["recall_at_5_mood"]["general"] == 0.8 and own["recall_at_5_mood"]["limit"] < 0.8
    assert "## This golden set's own bounds" in (tmp_path / "summary.md").read_text("utf-8")


def test_a_golden_set_bound_without_a_reason_exits_2(cli, tmp_path):
    thresholds = tmp_path / "thresholds.json"
    thresholds.write_text(
        json.dumps({"golden_sets": {"golden_set.json": {"offline": {"recall_at_5_mood": {"min": 0.1}}}}}), "utf-8"
    )
    done = cli("--case", "price-01", "--quiet", "--thresholds", str(thresholds))
    assert done.returncode == 2
    assert "must say why" in " ".join(done.stderr.split())
