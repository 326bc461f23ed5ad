"""The scheduled webhook check: is Telegram still sending this stack's updates to it?

`getWebhookInfo`, compared with the stack's webhook URL (WEBHOOK_URL). The answer is the
`WebhookRegistered` metric, 1 or 0, which the template's WebhookUnsetAlarm watches: the webhook deleted or
pointed elsewhere (a local `sommelier webhook set`, another deployment with the same token, a revoked
token) leaves the bot silent with every other alarm green. A Bot API call that fails counts as 0 for
this run; the alarm waits for an hour without a single 1.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sommelier.observability.telemetry import record_event
from sommelier.settings import Settings

METRIC = "WebhookRegistered"
TELEGRAM_TIMEOUT_S = 10.0


class WebhookState(NamedTuple):
    registered: bool
    reason: str
    pending_updates: int = 0
    last_error: str | None = None


def webhook_state(settings: Settings) -> WebhookState:
    """What Telegram holds for this bot, against the URL the stack expects. Never raises."""
    from sommelier.telegram.client import TelegramClient

    expected = settings.aws.webhook_url
    if not expected:
        return WebhookState(False, "WEBHOOK_URL is not set: nothing to compare with")
    token = settings.telegram.bot_token
    if not token:
        return WebhookState(False, "no bot token (telegram_bot_token in the bot's secret)")
    try:
        with TelegramClient(token, settings.telegram.api_base_url, connect_timeout=TELEGRAM_TIMEOUT_S) as client:
            info = client.get_webhook_info(read_timeout=TELEGRAM_TIMEOUT_S)
    except Exception as exc:  # the client masks the token; a failed check is a 0, never a crash
        return WebhookState(False, f"getWebhookInfo failed: {type(exc).__name__}: {exc}")
    if not info.url:
        reason = "no webhook is set: Telegram holds the updates (run `sommelier webhook set` or redeploy)"
    elif info.url != expected:
        reason = f"the webhook points elsewhere: {info.url}"
    else:
        reason = "the webhook points at this stack"
    return WebhookState(info.url == expected, reason, info.pending_update_count, info.last_error_message)


def check_webhook(settings: Settings) -> dict[str, Any]:
    """Run the check and record it as the WebhookRegistered metric."""
    state = webhook_state(settings)
    record_event(METRIC, 1 if state.registered else 0)
    return state._asdict()
