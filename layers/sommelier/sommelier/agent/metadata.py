"""A turn's metadata: what it did, what it cost and where each recommended wine came from (logged with the
turn, and the source of its metrics, observability.telemetry.record_turn).
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from sommelier.agent.llm.port import Usage
from sommelier.agent.turn import Found, TurnTrace
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.domain.conversation import ChatMessage
from sommelier.domain.pricing import LLMPrice


def turn_metadata(
    response: SommelierResponse,
    found: Found,
    history: list[ChatMessage],
    trace: TurnTrace,
    price: LLMPrice | None = None,
) -> dict[str, Any]:
    elapsed = round((time.perf_counter() - trace.started) * 1000, 2)
    usage = trace.ledger.usage
    return {
        "response_id": str(uuid.uuid4()),
        "generated_at": datetime.now(UTC).isoformat(),
        "model": trace.model if trace.mode not in ("offline", "guard") else "offline-rules",
        "mode": trace.mode,
        "offline": trace.mode in ("offline", "offline_fallback"),
        "generation_time_ms": elapsed,
        "candidates_retrieved": len(found),
        "conversation_turn": sum(1 for m in history if m.role == "user") + 1,
        "response_type": response.response_type,
        "guard_type": response.guard_type,
        "tools_used": trace.tools_used,
        "tool_errors": trace.tool_errors,
        "iterations": trace.tool_rounds,
        **trace.ledger.as_metadata(),
        "tokens": {
            "prompt": usage.prompt_tokens,
            "cached": usage.cached_tokens,
            "completion": usage.completion_tokens,
            "reasoning": usage.reasoning_tokens,
        },
        **turn_cost(usage, price),
        "prefetched_candidates": trace.prefetched,
        "turn_budget_s": round(trace.deadline.budget_s, 2),
        "structured_output_retries": trace.retries,
        "structured_output_errors": trace.errors,
        "request_corrections": trace.corrections,
        "latency_ms": {**trace.stages_ms, "total": elapsed},
        "recommendations": [_grounding(rec, found) for rec in response.wines],
    }


def turn_cost(usage: Usage, price: LLMPrice | None) -> dict[str, Any]:
    """The turn's LLM cost in dollars: what the provider reported, else the tokens at LLM_PRICE_PER_MTOK."""
    if usage.cost_usd is not None:
        return {"cost_usd": round(usage.cost_usd, 6), "cost_source": "provider"}
    if price is None or not (usage.prompt_tokens or usage.completion_tokens):
        return {"cost_usd": None if price is None else 0.0, "cost_source": None}
    cost = price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
    return {"cost_usd": round(cost, 6), "cost_source": "price"}


def _grounding(rec: WineRecommendation, found: Found) -> dict[str, Any]:
    wine = found.get(rec.wine_id or "")
    source = wine.found_by if wine is not None else None
    score = wine.similarity_score if wine is not None else None
    if score is None and source == "search_wines":
        score = 1.0  # every structured filter matched
    return {"wine_id": rec.wine_id, "wine_name": rec.wine_name, "relevance_score": score, "source_tool": source}
