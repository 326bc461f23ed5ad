"""The evaluation's outputs: thresholds check, JSON report, Markdown summary and PNG chart."""

from __future__ import annotations

import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sommelier.settings import project_root

from sommelier_dev.evaluation.harness import CaseRun, TurnRecord
from sommelier_dev.evaluation.metrics import RATIO_METRICS, CaseScore, value

THRESHOLDS_PATH = Path("eval") / "thresholds.json"

LABELS = {
    "response_type_accuracy": "response type",
    "tool_choice_accuracy": "tool choice",
    "filter_accuracy": "filter accuracy",
    "constraint_satisfaction": "constraint satisfaction",
    "groundedness": "groundedness",
    "model_groundedness": "model groundedness (first draft)",
    "recall_at_5_mood": "recall@5 (mood)",
    "recall_at_5_mood_uncapped": "recall@5 uncapped (mood)",
    "mood_pick_precision": "mood pick precision",
    "guard_accuracy": "guard accuracy",
    "guard_false_positive_rate": "guard false positives",
    "case_pass_rate": "cases passing every check",  # nosec B105 - a report label, not a password
    "llm_calls_per_turn": "LLM calls / turn",
    "tokens_per_turn": "tokens / turn",
    "prompt_tokens_per_turn": "prompt tokens / turn",
    "completion_tokens_per_turn": "completion tokens / turn",
    "latency_ms_p50": "latency p50, ms",
    "latency_ms_p95": "latency p95, ms",
}
COST_METRICS = (
    "llm_calls_per_turn",
    "tokens_per_turn",
    "prompt_tokens_per_turn",
    "completion_tokens_per_turn",
    "latency_ms_p50",
    "latency_ms_p95",
)
CHART_METRICS = (
    "response_type_accuracy",
    "tool_choice_accuracy",
    "filter_accuracy",
    "constraint_satisfaction",
    "groundedness",
    "guard_accuracy",
    "recall_at_5_mood",
)
# The per-category table's columns, where the run measured them.
CATEGORY_METRICS = (
    *CHART_METRICS,
    "mood_pick_precision",
    "guard_false_positive_rate",
    "llm_calls_per_turn",
    "tokens_per_turn",
    "latency_ms_p50",
    "latency_ms_p95",
)


# --------------------------------------------------------------------------- thresholds


def default_thresholds_path() -> Path:
    return project_root() / THRESHOLDS_PATH


def load_thresholds(path: str | Path | None = None) -> dict[str, Any]:
    path = Path(path) if path else default_thresholds_path()
    data = json.loads(Path(path).read_text("utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: thresholds must be a JSON object")
    return data


def thresholds_for(data: dict[str, Any], mode: str, golden: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """The bounds of one run: the targets (every mode) merged with the mode's own bounds ("offline" or "llm"),
    the stricter bound winning; then the golden set's own bounds for this mode, if `golden_sets` names it.

    A golden set's bound replaces the general one for that metric (it may be lower: a catalogue whose
    descriptions name no occasion gives mood search less to find). Each must say why, and the row keeps
    the general bound it replaced, so a report shows both.
    """
    merged: dict[str, dict[str, Any]] = {}
    for section in (data.get("targets") or {}, (data.get("modes") or {}).get(mode) or {}):
        for metric, bound in section.items():
            if not isinstance(bound, dict):
                continue
            current = merged.setdefault(metric, {})
            if "min" in bound:
                current["min"] = max(float(bound["min"]), current.get("min", float("-inf")))
            if "max" in bound:
                current["max"] = min(float(bound["max"]), current.get("max", float("inf")))
    for metric, bound in golden_set_bounds(data, golden, mode).items():
        general = merged.get(metric, {})
        entry: dict[str, Any] = {kind: float(bound[kind]) for kind in ("min", "max") if kind in bound}
        replaced = {kind: general[kind] for kind in ("min", "max") if kind in general}
        if replaced:
            entry["general"] = replaced
        entry["why"] = bound["why"]
        merged[metric] = entry
    return merged


def golden_set_bounds(data: dict[str, Any], golden: str | Path | None, mode: str) -> dict[str, dict[str, Any]]:
    """The bounds `golden_sets.<file name>.<mode>` gives one golden set (by its file name), validated."""
    if golden is None:
        return {}
    sets = data.get("golden_sets") or {}
    if not isinstance(sets, dict):
        raise ValueError('thresholds: "golden_sets" must be an object {file name: {mode: {metric: bound}}}')
    entry = sets.get(Path(golden).name) or {}
    bounds = (entry.get(mode) or {}) if isinstance(entry, dict) else None
    if not isinstance(bounds, dict):
        raise ValueError(f"thresholds: golden_sets.{Path(golden).name}.{mode} must be an object")
    for metric, bound in bounds.items():
        where = f"thresholds: golden_sets.{Path(golden).name}.{mode}.{metric}"
        if metric not in LABELS:
            raise ValueError(f"{where}: unknown metric")
        if not isinstance(bound, dict) or not ({"min", "max"} & set(bound)):
            raise ValueError(f'{where} must be {{"min" or "max": number, "why": text}}')
        if any(isinstance(bound.get(k), bool) or not isinstance(bound.get(k, 0), (int, float)) for k in ("min", "max")):
            raise ValueError(f"{where}: min and max must be numbers")
        if not isinstance(bound.get("why"), str) or not bound["why"].strip():
            raise ValueError(f'{where}: a golden set\'s own bound must say why it differs ("why")')
    return bounds


def check_thresholds(summary: dict[str, Any], thresholds: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per bound: metric, bound, measured value, ok. A metric with no data is 'not measured' (ok).
    A golden set's own bound also carries the general bound it replaced and why."""
    rows = []
    overall = summary["overall"]
    for metric, bound in thresholds.items():
        measured = value(overall, metric)
        for kind in ("min", "max"):
            if kind not in bound:
                continue
            limit = bound[kind]
            if measured is None:
                ok, status = True, "not measured"
            elif kind == "min":
                ok = measured >= limit - 1e-9
                status = "ok" if ok else "missed"
            else:
                ok = measured <= limit + 1e-9
                status = "ok" if ok else "missed"
            row = {"metric": metric, "bound": kind, "limit": limit, "value": measured, "ok": ok, "status": status}
            if "why" in bound:
                row["general"] = (bound.get("general") or {}).get(kind)
                row["why"] = bound["why"]
            rows.append(row)
    return rows


# --------------------------------------------------------------------------- JSON


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"python": platform.python_version(), "platform": platform.platform(), "cpu": cpu, "cpus": os.cpu_count()}


def build_report(
    *,
    meta: dict[str, Any],
    summary: dict[str, Any],
    scores: list[CaseScore],
    runs: list[CaseRun],
    threshold_rows: list[dict[str, Any]],
) -> dict[str, Any]:
    by_id = {run.case.id: run for run in runs}
    cases = []
    for score in scores:
        run = by_id[score.id]
        cases.append(
            {
                "score": score.to_json(),
                "expect": _expect_json(run),
                "note": run.case.note,
                "history_turns": [_turn_brief(t) for t in run.history],
                "turn": run.turn.to_json() if run.turn else None,
            }
        )
    return {
        "meta": meta,
        "summary": summary,
        "thresholds": {"passed": all(r["ok"] for r in threshold_rows), "rows": threshold_rows},
        "cases": cases,
    }


def _expect_json(run: CaseRun) -> dict[str, Any]:
    e = run.case.expect
    data: dict[str, Any] = {"response_type": list(e.response_types), "guard_type": e.guard_type}
    if e.tool_scored:
        data["tool"] = list(e.tools) or None
    if e.filters:
        data["filters"] = e.filters
    if e.constraints:
        data["constraints"] = e.constraints
    if e.relevant:
        data["relevant"] = [{"name": n, "producer": p} for n, p in e.relevant]
    return data


def _turn_brief(turn: TurnRecord) -> dict[str, Any]:
    return {
        "text": turn.text,
        "response_type": (turn.response or {}).get("response_type"),
        "wines": [w.get("wine_name") for w in turn.recommended],
        "tool_calls": [
            {"name": c.name, "arguments": c.arguments}
            for c in turn.tool_calls
            if c.name in ("search_wines", "semantic_search", "get_list")
        ],
    }


# --------------------------------------------------------------------------- Markdown


def format_value(metric: str, entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("value") is None:
        return "—"
    v = entry["value"]
    if metric in RATIO_METRICS:
        hits = entry.get("hits")
        suffix = f" ({hits}/{entry['n']})" if hits is not None else f" (n={entry['n']})"
        return (
            f"{v * 100:.1f}%{suffix}"
            if metric not in ("recall_at_5_mood", "recall_at_5_mood_uncapped", "mood_pick_precision")
            else f"{v:.3f}{suffix}"
        )
    if metric.startswith("latency"):
        return f"{v:.1f}"
    return f"{v:.2f}"


def format_bound(bound: dict[str, Any] | None, metric: str) -> str:
    if not bound:
        return ""
    as_pct = metric in RATIO_METRICS and metric not in (
        "recall_at_5_mood",
        "recall_at_5_mood_uncapped",
        "mood_pick_precision",
    )

    def text(limits: dict[str, Any]) -> str:
        parts = []
        for kind, sign in (("min", "≥"), ("max", "≤")):
            if kind in limits:
                parts.append(f"{sign} {limits[kind] * 100:g}%" if as_pct else f"{sign} {limits[kind]:g}")
        return ", ".join(parts)

    shown = text(bound)
    if bound.get("general"):
        shown += f" (this set; general {text(bound['general'])})"
    return shown


def render_markdown(report: dict[str, Any], thresholds: dict[str, dict[str, Any]]) -> str:
    lines = _run_lines(report)
    lines += _overall_lines(report, thresholds)
    lines += _category_lines(report["summary"])
    lines += _own_bound_lines(thresholds)
    lines += _failing_case_lines(report["cases"])
    lines += _warning_lines(report["cases"])
    lines += ["", "Metric definitions: `eval/README.md`.", ""]
    return "\n".join(lines)


def _run_lines(report: dict[str, Any]) -> list[str]:
    """The title and what was run: when, how, on which golden set, database and machine, and the verdict."""
    meta = report["meta"]
    return [
        f"# Sommelier evaluation — {meta['mode']} ({meta['model']})",
        "",
        f"- date: {meta['finished_at']}",
        f"- command: `{meta['command']}`",
        f"- golden set: `{meta['golden_set']}` ({meta['cases']} cases, {meta['turns']} turns played)",
        f"- database: {meta['database']}; catalogue: {meta['catalog_wines']} wines; embeddings: {meta['embedding_model']}",
        f"- machine: {meta['machine']['cpu']} × {meta['machine']['cpus']}, Python {meta['machine']['python']}, "
        f"{meta['machine']['platform']}",
        f"- wall time: {meta['duration_s']:.1f} s",
        f"- thresholds: **{'passed' if report['thresholds']['passed'] else 'MISSED'}**",
    ]


def _overall_lines(report: dict[str, Any], thresholds: dict[str, dict[str, Any]]) -> list[str]:
    """The overall table: every measured or bounded metric with its value, target and threshold status."""
    overall = report["summary"]["overall"]
    status = {r["metric"]: r for r in report["thresholds"]["rows"]}
    lines = ["", "## Overall", "", "| metric | value | target | status |", "|---|---|---|---|"]
    for metric in (*RATIO_METRICS, *COST_METRICS):
        entry = overall.get(metric)
        if (not entry or entry.get("value") is None) and metric not in thresholds:
            continue
        lines.append(
            f"| {LABELS[metric]} | {format_value(metric, entry)} | {format_bound(thresholds.get(metric), metric)} | "
            f"{_status_cell(status.get(metric))} |"
        )
    return lines


def _status_cell(row: dict[str, Any] | None) -> str:
    """✅ or ❌ for a bounded metric, followed by any status other than ok/missed (e.g. "not measured")."""
    if row is None:
        return ""
    mark = "✅" if row["ok"] else "❌"
    return mark if row["status"] in ("ok", "missed") else f"{mark} {row['status']}"


def _category_lines(summary: dict[str, Any]) -> list[str]:
    """The per-category table, with the columns the run measured overall."""
    overall = summary["overall"]
    shown = [m for m in CATEGORY_METRICS if overall.get(m, {}).get("value") is not None]
    lines = ["", "## Per category", ""]
    lines.append("| category | cases | " + " | ".join(LABELS[m] for m in shown) + " |")
    lines.append("|---|---|" + "---|" * len(shown))
    for name, block in sorted(summary["categories"].items()):
        cells = [format_value(m, block.get(m)) for m in shown]
        lines.append(f"| {name} | {block['cases']} | " + " | ".join(cells) + " |")
    return lines


def _own_bound_lines(thresholds: dict[str, dict[str, Any]]) -> list[str]:
    """The golden set's own bounds, each with why it differs from the general one (nothing when it has none)."""
    own = [(metric, bound) for metric, bound in thresholds.items() if bound.get("why")]
    if not own:
        return []
    lines = ["", "## This golden set's own bounds", ""]
    lines += [f"- {LABELS[metric]} {format_bound(bound, metric)}: {bound['why']}" for metric, bound in own]
    return lines


def _failing_case_lines(cases: list[dict[str, Any]]) -> list[str]:
    """Every case with a failed check: its history, query and the failures ("None." when all passed)."""
    failing = [c for c in cases if not c["score"]["passed"]]
    lines = ["", f"## Cases with a failed check ({len(failing)})", ""]
    if not failing:
        lines.append("None.")
    for case in failing:
        score = case["score"]
        history = " → ".join(f"«{h}»" for h in score["history"])
        lines.append(
            f"- **{score['id']}** ({score['category']}) {history + ' → ' if history else ''}«{score['query']}»: "
            + "; ".join(score["failures"])
        )
    return lines


def _warning_lines(cases: list[dict[str, Any]]) -> list[str]:
    """The scoring warnings, per case (nothing when there are none)."""
    warnings = [(c["score"]["id"], w) for c in cases for w in c["score"]["warnings"]]
    if not warnings:
        return []
    return ["", "## Warnings", "", *(f"- {case_id}: {w}" for case_id, w in warnings)]


# --------------------------------------------------------------------------- chart


def render_chart(summary: dict[str, Any], path: Path, *, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    categories = sorted(summary["categories"])
    metrics = [m for m in CHART_METRICS if summary["overall"].get(m, {}).get("value") is not None]
    width = 0.8 / max(1, len(metrics))
    fig, ax = plt.subplots(figsize=(max(10, 1.25 * (len(categories) + 1)), 5.5), dpi=110)
    groups = ["overall", *categories]
    for i, metric in enumerate(metrics):
        xs, ys = [], []
        for j, group in enumerate(groups):
            block = summary["overall"] if group == "overall" else summary["categories"][group]
            v = value(block, metric)
            if v is None:
                continue
            xs.append(j + (i - (len(metrics) - 1) / 2) * width)
            ys.append(v)
        ax.bar(xs, ys, width=width, label=LABELS[metric])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")
    ax.axhline(0.6, color="grey", linewidth=0.6, linestyle=":")
    ax.axhline(0.95, color="grey", linewidth=0.6, linestyle="--")
    ax.set_title(title)
    ax.legend(fontsize=8, ncol=4, loc="lower center", bbox_to_anchor=(0.5, -0.42))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def write_outputs(report: dict[str, Any], thresholds: dict[str, dict[str, Any]], output_dir: Path) -> dict[str, Path]:
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": output_dir / "report.json",
        "markdown": output_dir / "summary.md",
        "chart": output_dir / "categories.png",
    }
    paths["json"].write_text(json.dumps(report, ensure_ascii=False, indent=2, default=str) + "\n", "utf-8")
    paths["markdown"].write_text(render_markdown(report, thresholds), "utf-8")
    meta = report["meta"]
    render_chart(report["summary"], paths["chart"], title=f"Sommelier eval — {meta['mode']} ({meta['model']})")
    return paths


def timestamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
