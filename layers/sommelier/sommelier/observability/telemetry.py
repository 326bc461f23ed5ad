"""What an invocation reports besides its logs: per-turn metrics (Powertools EMF) and X-Ray subsegments.

Metrics: Powertools' Metrics keeps one metric set per process by design; the handler shell names its
namespace from the settings (`configure`) and flushes it after each invocation. Outside Lambda (metrics
disabled) nothing is buffered.

Traces: the handler shell installs a Powertools Tracer here when X-Ray is active; without one (locally, in
tests, in the webhook) `subsegment` does nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = logging.getLogger(__name__)

metrics = Metrics(namespace="Sommelier", service="sommelier")  # Powertools' process-wide metric set


def configure(namespace: str) -> None:
    """The namespace the metrics are written under (POWERTOOLS_METRICS_NAMESPACE, from the settings)."""
    metrics.provider.namespace = namespace


def record_turn(metadata: dict[str, Any]) -> None:
    """Add the turn's figures to the EMF metrics (flushed by the Lambda handler's log_metrics)."""
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled

    if is_metrics_disabled():
        # Powertools still auto-prints its buffer every 100 values; outside Lambda that garbles a chat.
        return
    try:
        metrics.add_metric(name="Turns", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="LLMCalls", unit=MetricUnit.Count, value=metadata["llm_calls"])
        metrics.add_metric(name="LLMHttpRequests", unit=MetricUnit.Count, value=metadata.get("llm_http_requests", 0))
        metrics.add_metric(name="PromptTokens", unit=MetricUnit.Count, value=metadata["tokens"]["prompt"])
        metrics.add_metric(name="CompletionTokens", unit=MetricUnit.Count, value=metadata["tokens"]["completion"])
        metrics.add_metric(name="ReasoningTokens", unit=MetricUnit.Count, value=metadata["tokens"].get("reasoning", 0))
        metrics.add_metric(name="CachedPromptTokens", unit=MetricUnit.Count, value=metadata["tokens"].get("cached", 0))
        if metadata.get("cost_usd") is not None:  # dollars per turn: the provider's figure or LLM_PRICE_PER_MTOK's
            metrics.add_metric(name="LLMCostUSD", unit=MetricUnit.NoUnit, value=metadata["cost_usd"])
        # Every tool-function invocation of the turn (begin_turn, each tool round, end_turn, a history read).
        metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=metadata["tool_function_calls"])
        metrics.add_metric(
            name="StructuredOutputRetries", unit=MetricUnit.Count, value=metadata["structured_output_retries"]
        )
        metrics.add_metric(name="TurnLatency", unit=MetricUnit.Milliseconds, value=metadata["latency_ms"]["total"])
        if metadata["mode"] not in ("llm", "offline"):
            metrics.add_metric(name=f"Fallback_{metadata['mode']}", unit=MetricUnit.Count, value=1)
    except Exception:  # metrics must never break a turn
        logger.debug("metrics not recorded", exc_info=True)


def record_event(name: str, value: float = 1) -> None:
    """Count one event (a refused Telegram part, a flood wait, an unreachable chat) as an EMF metric."""
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled

    if is_metrics_disabled():
        return
    try:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
    except Exception:  # metrics must never break a turn
        logger.debug("metric %s not recorded", name, exc_info=True)


# ---------------------------------------------------------------- traces

_tracer: Any = None


def install_tracer(tracer: Any) -> None:
    global _tracer
    _tracer = tracer


def active_tracer() -> Any:
    return _tracer


@contextmanager
def subsegment(name: str, **annotations: Any) -> Iterator[None]:
    """An X-Ray subsegment named `name`, annotated; a no-op without a Tracer."""
    tracer = _tracer
    if tracer is None:
        yield
        return
    with tracer.provider.in_subsegment(name) as segment:
        for key, value in annotations.items():
            segment.put_annotation(key, value)
        yield
