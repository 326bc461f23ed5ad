"""A run's summary: overall and per-category metrics of the case scores, each `{"value": float | None, "n": count}`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sommelier_dev.evaluation.metrics import CaseScore

# The share metrics (0..1) that summarize() reports for every block; the report prints them as percentages.
RATIO_METRICS = (
    "response_type_accuracy",
    "tool_choice_accuracy",
    "filter_accuracy",
    "constraint_satisfaction",
    "groundedness",
    "model_groundedness",
    "recall_at_5_mood",
    "recall_at_5_mood_uncapped",
    "mood_pick_precision",
    "guard_accuracy",
    "guard_false_positive_rate",
    "case_pass_rate",
)


def _ratio(hits: int, total: int) -> dict[str, Any]:
    return {"value": (hits / total) if total else None, "n": total, "hits": hits}


def _mean(values: list[float]) -> dict[str, Any]:
    return {"value": (sum(values) / len(values)) if values else None, "n": len(values)}


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100), as numpy's default."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(scores: list[CaseScore]) -> dict[str, Any]:
    """Overall and per-category metrics: each `{"value": float | None, "n": count}`."""
    categories: dict[str, list[CaseScore]] = {}
    for score in scores:
        categories.setdefault(score.category, []).append(score)
    return {
        "overall": _summary_block(scores),
        "categories": {name: _summary_block(group) for name, group in categories.items()},
    }


def _summary_block(group: list[CaseScore]) -> dict[str, Any]:
    return {
        "cases": len(group),
        **_answer_choices(group),
        **_answer_grounding(group),
        **_guard_quality(group),
        **_turn_cost(group),
    }


def _answer_choices(group: list[CaseScore]) -> dict[str, Any]:
    """What the answers chose right: the type, the tools and the filters, the constraints."""
    tool = [s.tool_ok for s in group if s.tool_ok is not None]
    filters = [s.filters_ok for s in group if s.filters_ok is not None]
    constraint = [s.constraint_pairs for s in group]
    return {
        "response_type_accuracy": _ratio(sum(s.response_type_ok for s in group), len(group)),
        "tool_choice_accuracy": _ratio(sum(tool), len(tool)),
        "filter_accuracy": _ratio(sum(filters), len(filters)),
        "constraint_satisfaction": _ratio(sum(ok for ok, _ in constraint), sum(n for _, n in constraint)),
    }


def _answer_grounding(group: list[CaseScore]) -> dict[str, Any]:
    """Whether the answers stand on the catalogue and this turn's tools, and find the labelled wines (recall)."""
    grounded = [s.grounded_pairs for s in group]
    model = [(s.model_grounded or 0, s.model_recommended) for s in group if s.model_recommended is not None]
    recall = [s.recall_at_5 for s in group if s.recall_at_5 is not None]
    recall_uncapped = [s.recall_at_5_uncapped for s in group if s.recall_at_5_uncapped is not None]
    precision = [s.mood_precision for s in group if s.mood_precision is not None]
    return {
        "groundedness": _ratio(sum(ok for ok, _ in grounded), sum(n for _, n in grounded)),
        "model_groundedness": _ratio(sum(ok for ok, _ in model), sum(n for _, n in model)),
        "recall_at_5_mood": _mean(recall),
        "recall_at_5_mood_uncapped": _mean(recall_uncapped),
        "mood_pick_precision": _mean(precision),
    }


def _guard_quality(group: list[CaseScore]) -> dict[str, Any]:
    guard = [s.guard_ok for s in group if s.guard_ok is not None]
    normal = [s for s in group if not s.guard_expected]
    return {
        "guard_accuracy": _ratio(sum(guard), len(guard)),
        "guard_false_positive_rate": _ratio(sum(s.guard_false_positive for s in normal), len(normal)),
        "case_pass_rate": _ratio(sum(s.passed for s in group), len(group)),
    }


def _turn_cost(group: list[CaseScore]) -> dict[str, Any]:
    """What a turn costs: LLM calls, tokens and time."""
    latencies = [s.latency_ms for s in group]
    tokens = [s.prompt_tokens + s.completion_tokens for s in group]
    return {
        "llm_calls_per_turn": _mean([float(s.llm_calls) for s in group]),
        "tokens_per_turn": _mean([float(t) for t in tokens]),
        "prompt_tokens_per_turn": _mean([float(s.prompt_tokens) for s in group]),
        "completion_tokens_per_turn": _mean([float(s.completion_tokens) for s in group]),
        "latency_ms_p50": {"value": percentile(latencies, 50), "n": len(latencies)},
        "latency_ms_p95": {"value": percentile(latencies, 95), "n": len(latencies)},
    }


def value(summary_block: dict[str, Any], metric: str) -> float | None:
    entry = summary_block.get(metric)
    if isinstance(entry, dict):
        return entry.get("value")
    return None
