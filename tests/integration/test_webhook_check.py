"""The scheduled webhook check (functions/set_webhook/check.py, sommelier.deploy.webhook_check) against the
fake Bot API: the WebhookRegistered metric is 1 only while Telegram sends the updates to this stack."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import pytest
from sommelier.deploy import webhook_check
from sommelier.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
OURS = "https://abc123.execute-api.eu-central-1.amazonaws.com/telegram/webhook"


@dataclass
class Context:
    function_name: str = "sommelier-webhook-check"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-webhook-check"
    aws_request_id: str = "3f1f9a52-6c1e-4b7e-9a40-000000000077"


@pytest.fixture
def recorded(monkeypatch) -> list[tuple[str, float]]:
    values: list[tuple[str, float]] = []
    monkeypatch.setattr(webhook_check, "record_event", lambda name, value=1: values.append((name, value)))
    return values


def settings_for(telegram, **extra: str):
    environ = {"TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_API_BASE_URL": telegram.base_url, "WEBHOOK_URL": OURS}
    return load_settings({**environ, **extra})


def set_webhook(telegram, url: str) -> None:
    import urllib.parse
    import urllib.request

    data = urllib.parse.urlencode({"url": url}).encode()
    with urllib.request.urlopen(f"{telegram.api_url}/setWebhook", data=data, timeout=5) as response:  # noqa: S310
        assert response.status == 200


def test_registered_only_when_telegram_points_at_this_stack(telegram, recorded):
    unset = webhook_check.check_webhook(settings_for(telegram))
    assert unset["registered"] is False and "no webhook is set" in unset["reason"]
    set_webhook(telegram, "https://elsewhere.example.com/hook")
    elsewhere = webhook_check.check_webhook(settings_for(telegram))
    assert elsewhere["registered"] is False and "elsewhere.example.com" in elsewhere["reason"]
    set_webhook(telegram, OURS)
    ours = webhook_check.check_webhook(settings_for(telegram))
    assert ours["registered"] is True and ours["pending_updates"] == 0
    assert recorded == [("WebhookRegistered", 0), ("WebhookRegistered", 0), ("WebhookRegistered", 1)]


def test_a_failed_call_or_a_missing_setting_is_a_zero_not_a_crash(telegram, recorded):
    telegram.fail_next("getWebhookInfo", status=401, description="Unauthorized")
    failed = webhook_check.check_webhook(settings_for(telegram))
    assert failed["registered"] is False and "getWebhookInfo failed" in failed["reason"]
    assert telegram.token not in failed["reason"]
    assert webhook_check.check_webhook(load_settings({"WEBHOOK_URL": OURS}))["registered"] is False  # no token
    assert "WEBHOOK_URL" in webhook_check.check_webhook(settings_for(telegram, WEBHOOK_URL=""))["reason"]
    assert [value for _, value in recorded] == [0, 0, 0]


def test_the_scheduled_handler(telegram, monkeypatch, recorded):
    for name, value in (("TELEGRAM_BOT_TOKEN", telegram.token), ("TELEGRAM_API_BASE_URL", telegram.base_url)):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("WEBHOOK_URL", OURS)
    monkeypatch.delenv("SOMMELIER_SECRETS_ARN", raising=False)
    set_webhook(telegram, OURS)
    spec = importlib.util.spec_from_file_location(
        "webhook_check_handler", ROOT / "functions" / "set_webhook" / "check.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.handler({}, Context())["registered"] is True
    assert recorded == [("WebhookRegistered", 1)]
