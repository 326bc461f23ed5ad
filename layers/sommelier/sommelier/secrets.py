"""Secrets: an environment variable wins; in Lambda they come from one Secrets Manager JSON secret
(`SOMMELIER_SECRETS_ARN`) read through Powertools Parameters, cached for five minutes."""

from __future__ import annotations

import logging
import os

from sommelier.config import env

logger = logging.getLogger(__name__)

SECRET_KEYS = {
    "TELEGRAM_BOT_TOKEN": "telegram_bot_token",  # nosec B105 - the key's name in the secret, not its value
    "TELEGRAM_WEBHOOK_SECRET": "telegram_webhook_secret",  # nosec B105 - the key's name in the secret, not its value
    "OPENAI_API_KEY": "openai_api_key",
    "EMBEDDING_API_KEY": "embedding_api_key",
}
CACHE_SECONDS = 300


def _secret_document() -> dict:
    arn = env("SOMMELIER_SECRETS_ARN")
    if not arn:
        return {}
    from aws_lambda_powertools.utilities import parameters

    document = parameters.get_secret(arn, transform="json", max_age=CACHE_SECONDS)
    return document if isinstance(document, dict) else {}


def secret(name: str) -> str | None:
    """One secret by its environment-variable name."""
    value = env(name)
    if value:
        return value
    found = _secret_document().get(SECRET_KEYS[name])
    return found.strip() if isinstance(found, str) and found.strip() else None


def load_secrets_into_environment() -> None:
    """Fill unset secret variables from Secrets Manager, so load_settings() sees them (Lambda cold start)."""
    if not env("SOMMELIER_SECRETS_ARN"):
        return
    try:
        document = _secret_document()
    except Exception as exc:  # a missing permission must be a clear log line, not a crash loop
        logger.error("could not read the bot secrets: %s", type(exc).__name__)
        raise
    for variable, key in SECRET_KEYS.items():
        value = document.get(key)
        if not env(variable) and isinstance(value, str) and value.strip():
            os.environ[variable] = value.strip()
