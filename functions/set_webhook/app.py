"""CloudFormation custom resource: register the bot's Telegram webhook on deploy (SetWebhookOnDeploy).

Create/Update -> `setWebhook` with the resource's `Url`, the generated secret token and the update
types the bot handles, then `setMyCommands` with the bot's menu (both from the layer's
`sommelier.telegram.router`, the one place they are listed). Delete -> `deleteWebhook`, but only while Telegram still points at this
stack's URL (another deployment or a local `sommelier webhook set` may have taken over since), and
never failing: a stack must always be deletable.

Credentials: TELEGRAM_BOT_TOKEN / TELEGRAM_WEBHOOK_SECRET when set (local runs, tests), else the
`telegram_bot_token` key of the JSON secret SOMMELIER_SECRETS_ARN and the `telegram_webhook_secret`
key of TELEGRAM_WEBHOOK_SECRET_ARN, read through Powertools Parameters without the cache (this very
deployment may have just created them). The token is part of every Bot API URL: it is never logged and is scrubbed from any
message that goes to CloudFormation.

`sommelier.deploy.custom_resource.respond` answers CloudFormation whatever happens, within the function's
time: every Bot API call and retry wait is cut to the budget (a 429 whose retry_after does not fit
fails at once), and every import beyond the standard library happens inside the guarded work.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from typing import Any

from sommelier.deploy.custom_resource import (  # standard library only
    FAILED,
    SUCCESS,
    Budget,
    Outcome,
    one_line,
    respond,
)

# Written through the handler shell's redacting Powertools handler once the work has set it up.
logger = logging.getLogger("sommelier.set_webhook")

PHYSICAL_RESOURCE_ID = "sommelier-telegram-webhook"
# Returned when Create fails, so the rollback's Delete knows there is nothing to remove.
NOT_CREATED_ID = "sommelier-telegram-webhook-not-created"
DEFAULT_API_BASE_URL = "https://api.telegram.org"
SECRET_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")  # what Telegram accepts as secret_token
TELEGRAM_ATTEMPTS = 3
TELEGRAM_TIMEOUT_S = 10
MAX_RETRY_AFTER_S = 10


class TelegramError(RuntimeError):
    """The Bot API answered ok=false (or not at all)."""

    def __init__(self, method: str, description: str, error_code: int | None = None, retry_after: int | None = None):
        self.method = method
        self.description = description
        self.error_code = error_code
        self.retry_after = retry_after
        code = f" {error_code}" if error_code is not None else ""
        super().__init__(f"Telegram {method} failed{code}: {description}")

    @property
    def retryable(self) -> bool:
        return self.error_code is None or self.error_code == 429 or self.error_code >= 500


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
        description = _set_webhook(token, secret_token, url, _allowed_updates(properties), budget)
        logger.info("Webhook set", extra={"url": url, "telegram": description})
        menu = _set_menu(token, budget)
    except Exception as exc:  # the token is masked before anything is logged or reported
        reason = one_line(exc, token)
        logger.error("Webhook registration failed", extra={"error": reason})
        return Outcome(FAILED, reason, NOT_CREATED_ID if request_type == "Create" else physical_id)
    return Outcome(SUCCESS, f"Webhook set to {url}; {menu}", PHYSICAL_RESOURCE_ID, {"Url": url})


# ------------------------------------------------------------------------------ requests --


def _delete(event: dict[str, Any], physical_id: str, budget: Budget) -> str:
    """deleteWebhook, if the webhook is still ours. Never raises: a stack must stay deletable."""
    if physical_id == NOT_CREATED_ID:
        return "Nothing to delete: the webhook was never set"
    url = str((event.get("ResourceProperties") or {}).get("Url") or "")
    token: str | None = None
    try:
        token, _secret_token = _credentials()
        current = (_call(token, "getWebhookInfo", {}, budget) or {}).get("url", "")
        if url and current != url:
            logger.info("Webhook left alone: Telegram points elsewhere", extra={"ours": url, "current": current})
            return "Webhook left alone: Telegram no longer points at this stack"
        _call(token, "deleteWebhook", {"drop_pending_updates": False}, budget)
        logger.info("Webhook deleted", extra={"url": url})
        return "Webhook deleted"
    except Exception as exc:
        message = one_line(exc, token)
        logger.warning("Could not delete the webhook; deleting the resource anyway", extra={"error": message})
        return f"Webhook not deleted ({message}); delete it with `sommelier webhook delete`"


def _set_webhook(token: str, secret_token: str, url: str, allowed_updates: list[str], budget: Budget) -> str:
    result = _call(
        token,
        "setWebhook",
        {"url": url, "secret_token": secret_token, "allowed_updates": allowed_updates, "drop_pending_updates": False},
        budget,
    )
    return str(result)


def _set_menu(token: str, budget: Budget) -> str:
    """setMyCommands with the bot's menu. The webhook matters more than the menu: a failure is a warning."""
    from sommelier.telegram.router import menu_commands

    commands = menu_commands()
    try:
        _call(token, "setMyCommands", {"commands": commands}, budget)
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
    from sommelier.telegram.router import ALLOWED_UPDATES

    return list(ALLOWED_UPDATES)


# ------------------------------------------------------------------------------ secrets ---


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None  # an empty variable counts as unset (docs/architecture.md)


def _credentials() -> tuple[str, str]:
    token = _env("TELEGRAM_BOT_TOKEN")
    secret_token = _env("TELEGRAM_WEBHOOK_SECRET")
    if not (token and secret_token):
        document = _secret_document()
        token = token or _string(document.get("telegram_bot_token"))
        secret_token = secret_token or _string(document.get("telegram_webhook_secret"))
    if not token:
        raise RuntimeError("no Telegram bot token: set TELEGRAM_BOT_TOKEN or telegram_bot_token in the secret")
    if not secret_token or not SECRET_TOKEN.match(secret_token):
        raise RuntimeError("the webhook secret token is missing or not 1-256 characters of A-Z a-z 0-9 _ -")
    return token, secret_token


# The bot secret (token and keys) and the webhook secret token's own secret, merged in this order.
SECRET_ARN_VARIABLES = ("SOMMELIER_SECRETS_ARN", "TELEGRAM_WEBHOOK_SECRET_ARN")


def _secret_document() -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for variable in SECRET_ARN_VARIABLES:
        arn = _env(variable)
        if not arn:
            continue
        from aws_lambda_powertools.utilities import parameters

        # force_fetch: this very deployment may have just created or changed the secret.
        document = parameters.get_secret(arn, transform="json", force_fetch=True)
        if not isinstance(document, dict):
            raise RuntimeError(f"the secret of {variable} must be a JSON object")
        merged.update(document)
    return merged


def _string(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


# ------------------------------------------------------------------------------ telegram --


def _call(token: str, method: str, payload: dict[str, Any], budget: Budget) -> Any:
    """One Bot API call with a few retries (429 retry_after, 5xx, network errors), all within the budget."""
    base = (_env("TELEGRAM_API_BASE_URL") or DEFAULT_API_BASE_URL).rstrip("/")
    body = json.dumps(payload).encode()
    for attempt in range(1, TELEGRAM_ATTEMPTS + 1):
        request = urllib.request.Request(
            f"{base}/bot{token}/{method}",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            try:
                with urllib.request.urlopen(request, timeout=budget.timeout(TELEGRAM_TIMEOUT_S)) as response:  # nosec B310 - the Bot API base URL (https by default) from our own configuration
                    answer = _decode(method, response.read())
            except urllib.error.HTTPError as exc:  # the Bot API answers errors with a JSON body too
                answer = _decode(method, exc.read(), http_status=exc.code)
            if answer.get("ok") is True:
                return answer.get("result")
            parameters = answer.get("parameters") or {}
            raise TelegramError(
                method,
                str(answer.get("description") or "no description"),
                error_code=answer.get("error_code") if isinstance(answer.get("error_code"), int) else None,
                retry_after=parameters.get("retry_after") if isinstance(parameters.get("retry_after"), int) else None,
            )
        except TelegramError as exc:
            if not exc.retryable or attempt == TELEGRAM_ATTEMPTS or (exc.retry_after or 0) > MAX_RETRY_AFTER_S:
                raise  # a flood wait longer than MAX_RETRY_AFTER_S will not end within a deploy
            delay = exc.retry_after or attempt
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            if attempt == TELEGRAM_ATTEMPTS:
                raise TelegramError(method, f"network error: {type(exc).__name__}") from None
            delay = attempt
        if delay >= budget.remaining():
            raise TelegramError(method, f"no time left to wait {delay} s before retrying") from None
        logger.warning("Telegram call failed; retrying", extra={"method": method, "attempt": attempt, "delay_s": delay})
        time.sleep(delay)
    raise AssertionError("unreachable")


def _decode(method: str, raw: bytes, http_status: int | None = None) -> dict[str, Any]:
    try:
        answer = json.loads(raw or b"{}")
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise TelegramError(method, "the answer is not a JSON object", error_code=http_status)
    return answer
