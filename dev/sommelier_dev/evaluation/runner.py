"""One evaluation run: play the cases, score them, summarise, check the thresholds."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sommelier_dev.evaluation.golden import GoldenCase
from sommelier_dev.evaluation.harness import CaseRun, EvalHarness
from sommelier_dev.evaluation.metrics import CaseScore, Catalog, score_case, summarize
from sommelier_dev.evaluation.report import build_report, check_thresholds, machine_info


@dataclass
class EvalResult:
    runs: list[CaseRun]
    scores: list[CaseScore]
    summary: dict[str, Any]
    threshold_rows: list[dict[str, Any]]
    report: dict[str, Any]

    @property
    def passed(self) -> bool:
        return all(row["ok"] for row in self.threshold_rows)

    def missed(self) -> list[dict[str, Any]]:
        return [row for row in self.threshold_rows if not row["ok"]]

    def score(self, case_id: str) -> CaseScore:
        return next(s for s in self.scores if s.id == case_id)


def evaluate(
    harness: EvalHarness,
    cases: list[GoldenCase],
    *,
    thresholds: dict[str, dict[str, Any]] | None = None,
    catalog: Catalog | None = None,
    meta: dict[str, Any] | None = None,
    progress: Callable[[int, GoldenCase, CaseRun], None] | None = None,
) -> EvalResult:
    catalog = catalog or Catalog.load(harness.tools.inner)
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    runs = harness.run(cases, progress=progress)
    duration = time.perf_counter() - started
    scores = [score_case(run, catalog) for run in runs]
    summary = summarize(scores)
    rows = check_thresholds(summary, thresholds or {})
    info = {
        "mode": harness.mode,
        "model": harness.model,
        "embedding_model": getattr(harness.agent.embedder, "model", None),
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "duration_s": round(duration, 2),
        "cases": len(cases),
        "turns": sum(len(c.history) + 1 for c in cases),
        "catalog_wines": len(catalog),
        "machine": machine_info(),
        "command": "",
        "golden_set": "",
        "database": "",
        **(meta or {}),
    }
    report = build_report(meta=info, summary=summary, scores=scores, runs=runs, threshold_rows=rows)
    return EvalResult(runs=runs, scores=scores, summary=summary, threshold_rows=rows, report=report)
