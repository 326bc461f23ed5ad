"""CloudFormation custom resource: register the bot's Telegram webhook on deploy (SetWebhookOnDeploy).

Create/Update -> `setWebhook` with the resource's `Url`, the generated secret token and the update
types the bot handles, then `setMyCommands` with the bot's menu (both from the layer's
`sommelier.telegram.registration`, the one place they are listed). Delete -> `deleteWebhook`, but only while Telegram still points at this
stack's URL (another deployment or a local `sommelier webhook set` may have taken over since), and
never failing: a stack must always be deletable.

Credentials come from the settings (TELEGRAM_BOT_TOKEN / TELEGRAM_WEBHOOK_SECRET when set, else the
bot's secrets), read without the cache: this very deployment may have just created them. The calls go
through the package's Bot API client, which masks the token in every message; it is also scrubbed
from anything that goes to CloudFormation.

`sommelier.deploy.custom_resource.respond` answers CloudFormation whatever happens, within the function's
time: every Bot API call and retry wait is cut to the budget (a 429 whose retry_after does not fit
fails at once), and every import beyond the standard library happens inside the guarded work.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from sommelier.deploy.custom_resource import (  # standard library only
    FAILED,
    SUCCESS,
    Budget,
    Outcome,
    one_line,
    respond,
)

if TYPE_CHECKING:
    from sommelier.telegram.client import TelegramClient

# Written through the handler shell's redacting Powertools handler once the work has set it up.
logger = logging.getLogger("sommelier.set_webhook")

PHYSICAL_RESOURCE_ID = "sommelier-telegram-webhook"
# Returned when Create fails, so the rollback's Delete knows there is nothing to remove.
NOT_CREATED_ID = "sommelier-telegram-webhook-not-created"
SECRET_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")  # what Telegram accepts as secret_token
TELEGRAM_ATTEMPTS = 3
TELEGRAM_TIMEOUT_S = 10.0
MAX_RETRY_AFTER_S = 10

Answer = TypeVar("Answer")


def handler(event: dict[str, Any], context: Any) -> None:
    respond(event, context, _work, physical_id=PHYSICAL_RESOURCE_ID, failed_create_id=NOT_CREATED_ID)


def _work(event: dict[str, Any], budget: Budget) -> Outcome:
    from sommelier.observability.shell import custom_resource_logger

    custom_resource_logger("sommelier-set-webhook", event)
    request_type = event.get("RequestType")
    physical_id = event.get("PhysicalResourceId") or PHYSICAL_RESOURCE_ID
    if request_type == "Delete":
        return Outcome(SUCCESS, _delete(event, physical_id, budget), physical_id)
    if request_type not in ("Create", "Update"):
        return Outcome(FAILED, f"Unknown RequestType {request_type!r}", physical_id)
    token: str | None = None
    try:
        properties = event.get("ResourceProperties") or {}
        url = _webhook_url(properties)
        token, secret_token = _credentials()
        with _client(token, budget) as client:
            _with_retries(
                budget,
                "setWebhook",
                lambda: client.set_webhook(
                    url, secret_token, _allowed_updates(properties), read_timeout=budget.timeout(TELEGRAM_TIMEOUT_S)
                ),
            )
            logger.info("Webhook set", extra={"url": url})
            menu = _set_menu(client, budget, token)
    except Exception as exc:  # the token is masked before anything is logged or reported
        reason = one_line(exc, token)
        logger.error("Webhook registration failed", extra={"error": reason})
        return Outcome(FAILED, reason, NOT_CREATED_ID if request_type == "Create" else physical_id)
    return Outcome(SUCCESS, f"Webhook set to {url}; {menu}", PHYSICAL_RESOURCE_ID, {"Url": url})


def _delete(event: dict[str, Any], physical_id: str, budget: Budget) -> str:
    """deleteWebhook, if the webhook is still ours. Never raises: a stack must stay deletable."""
    if physical_id == NOT_CREATED_ID:
        return "Nothing to delete: the webhook was never set"
    url = str((event.get("ResourceProperties") or {}).get("Url") or "")
    token: str | None = None
    try:
        token, _secret_token = _credentials()
        with _client(token, budget) as client:
            info = _with_retries(
                budget,
                "getWebhookInfo",
                lambda: client.get_webhook_info(read_timeout=budget.timeout(TELEGRAM_TIMEOUT_S)),
            )
            if url and info.url != url:
                logger.info("Webhook left alone: Telegram points elsewhere", extra={"ours": url, "current": info.url})
                return "Webhook left alone: Telegram no longer points at this stack"
            _with_retries(
                budget, "deleteWebhook", lambda: client.delete_webhook(read_timeout=budget.timeout(TELEGRAM_TIMEOUT_S))
            )
        logger.info("Webhook deleted", extra={"url": url})
        return "Webhook deleted"
    except Exception as exc:
        message = one_line(exc, token)
        logger.warning("Could not delete the webhook; deleting the resource anyway", extra={"error": message})
        return f"Webhook not deleted ({message}); delete it with `sommelier webhook delete`"


def _set_menu(client: TelegramClient, budget: Budget, token: str) -> str:
    """setMyCommands with the bot's menu. The webhook matters more than the menu: a failure is a warning."""
    from sommelier.telegram.client import TelegramError
    from sommelier.telegram.registration import menu_commands

    commands = menu_commands()
    try:
        _with_retries(
            budget,
            "setMyCommands",
            lambda: client.set_my_commands(commands, read_timeout=budget.timeout(TELEGRAM_TIMEOUT_S)),
        )
    except (TelegramError, TimeoutError) as exc:
        logger.warning("The command menu was not set", extra={"error": one_line(exc, token)})
        return f"menu not set ({one_line(exc, token)})"
    names = " ".join(f"/{c['command']}" for c in commands)
    logger.info("Command menu set", extra={"commands": names})
    return f"menu {names}"


def _webhook_url(properties: dict[str, Any]) -> str:
    url = properties.get("Url")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise ValueError("ResourceProperties.Url must be an https:// URL")
    return url


def _allowed_updates(properties: dict[str, Any]) -> list[str]:
    value = properties.get("AllowedUpdates")
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)  # an explicit override in the template
    from sommelier.telegram.registration import ALLOWED_UPDATES

    return list(ALLOWED_UPDATES)


def _credentials() -> tuple[str, str]:
    """The bot token and the webhook secret token: this entry point's settings, the secrets read afresh."""
    import os

    from sommelier.secrets import read_secret_values
    from sommelier.settings import load_settings

    telegram = load_settings(os.environ, read_secret_values(os.environ, fresh=True)).telegram
    if not telegram.bot_token:
        raise RuntimeError("no Telegram bot token: set TELEGRAM_BOT_TOKEN or telegram_bot_token in the secret")
    if not telegram.webhook_secret or not SECRET_TOKEN.match(telegram.webhook_secret):
        raise RuntimeError("the webhook secret token is missing or not 1-256 characters of A-Z a-z 0-9 _ -")
    return telegram.bot_token, telegram.webhook_secret


def _client(token: str, budget: Budget) -> TelegramClient:
    import os

    from sommelier.settings import load_settings
    from sommelier.telegram.client import TelegramClient

    base_url = load_settings(os.environ).telegram.api_base_url
    return TelegramClient(token, base_url, connect_timeout=budget.timeout(TELEGRAM_TIMEOUT_S))


def _with_retries(budget: Budget, method: str, call: Callable[[], Answer]) -> Answer:
    """One Bot API call with a few retries (429 retry_after, 5xx, network errors), all within the budget."""
    from sommelier.telegram.client import NetworkError, RetryAfter, ServerError

    for attempt in range(1, TELEGRAM_ATTEMPTS + 1):
        try:
            return call()
        except RetryAfter as exc:
            if attempt == TELEGRAM_ATTEMPTS or exc.retry_after > MAX_RETRY_AFTER_S:
                raise  # a flood wait longer than MAX_RETRY_AFTER_S will not end within a deploy
            delay = exc.retry_after
        except (ServerError, NetworkError):
            if attempt == TELEGRAM_ATTEMPTS:
                raise
            delay = attempt
        if delay >= budget.remaining():
            raise TimeoutError(f"{method}: no time left to wait {delay:g} s before retrying") from None
        logger.warning("Telegram call failed; retrying", extra={"method": method, "attempt": attempt, "delay_s": delay})
        time.sleep(delay)
    raise AssertionError("unreachable")
