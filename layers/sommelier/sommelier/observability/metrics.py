"""Per-turn metrics (Powertools EMF), and optional Langfuse traces when its keys are set (docs/architecture.md)."""

from __future__ import annotations

import logging
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from sommelier.settings import env

logger = logging.getLogger(__name__)

metrics = Metrics(namespace=env("POWERTOOLS_METRICS_NAMESPACE", "Sommelier"), service="sommelier")
_langfuse_client: Any = None
_langfuse_checked = False


def record_turn(metadata: dict[str, Any]) -> None:
    """Add the turn's figures to the EMF metrics (flushed by the Lambda handler's log_metrics)."""
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled

    if is_metrics_disabled():
        # Powertools still auto-prints its buffer every 100 values; outside Lambda that garbles a chat.
        _send_to_langfuse(metadata)
        return
    try:
        metrics.add_metric(name="Turns", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="LLMCalls", unit=MetricUnit.Count, value=metadata["llm_calls"])
        metrics.add_metric(name="LLMHttpRequests", unit=MetricUnit.Count, value=metadata.get("llm_http_requests", 0))
        metrics.add_metric(name="PromptTokens", unit=MetricUnit.Count, value=metadata["tokens"]["prompt"])
        metrics.add_metric(name="CompletionTokens", unit=MetricUnit.Count, value=metadata["tokens"]["completion"])
        metrics.add_metric(name="ReasoningTokens", unit=MetricUnit.Count, value=metadata["tokens"].get("reasoning", 0))
        metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=len(metadata["tools_used"]))
        metrics.add_metric(
            name="StructuredOutputRetries", unit=MetricUnit.Count, value=metadata["structured_output_retries"]
        )
        metrics.add_metric(name="TurnLatency", unit=MetricUnit.Milliseconds, value=metadata["latency_ms"]["total"])
        if metadata["mode"] not in ("llm", "offline"):
            metrics.add_metric(name=f"Fallback_{metadata['mode']}", unit=MetricUnit.Count, value=1)
    except Exception:  # metrics must never break a turn
        logger.debug("metrics not recorded", exc_info=True)
    _send_to_langfuse(metadata)


def record_event(name: str, value: float = 1) -> None:
    """Count one event (a refused Telegram part, a flood wait, an unreachable chat) as an EMF metric."""
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled

    if is_metrics_disabled():
        return
    try:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
    except Exception:  # metrics must never break a turn
        logger.debug("metric %s not recorded", name, exc_info=True)


def _send_to_langfuse(metadata: dict[str, Any]) -> None:
    global _langfuse_client, _langfuse_checked
    if not (env("LANGFUSE_PUBLIC_KEY") and env("LANGFUSE_SECRET_KEY")):
        return
    if not _langfuse_checked:
        _langfuse_checked = True
        try:
            from langfuse import Langfuse  # optional dependency

            _langfuse_client = Langfuse()
        except Exception:
            logger.warning("LANGFUSE_* keys are set but the langfuse package is unavailable; traces are off")
    if _langfuse_client is None:
        return
    try:
        _langfuse_client.create_event(name="sommelier-turn", metadata=metadata)
    except Exception:
        logger.debug("langfuse event not sent", exc_info=True)
