"""record_event: one EMF count per Telegram event (refused part, flood wait, unreachable chat); never breaks a turn."""

from __future__ import annotations

from sommelier.observability.telemetry import metrics, record_event


def test_an_event_is_counted_in_the_emf_buffer(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    metrics.clear_metrics()
    try:
        record_event("TelegramPartRefused")
        record_event("TelegramPartRefused")
        record_event("TelegramFloodWait")
        assert metrics.metric_set["TelegramPartRefused"]["Value"] == [1.0, 1.0]
        assert metrics.metric_set["TelegramFloodWait"]["Unit"] == "Count"
    finally:
        metrics.clear_metrics()


def test_nothing_is_buffered_outside_lambda(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    metrics.clear_metrics()
    record_event("TelegramChatUnavailable")
    assert "TelegramChatUnavailable" not in metrics.metric_set
