"""Secrets: an environment variable set by the operator wins; in Lambda they come from Secrets Manager
JSON secrets read through Powertools Parameters, cached for five minutes.

Two secrets, merged in this order: `SOMMELIER_SECRETS_ARN` (bot token, LLM and embedding keys) and
`TELEGRAM_WEBHOOK_SECRET_ARN` (the generated webhook secret token, kept apart so that changing a key
never regenerates it). Values copied from a secret into the environment stay tied to it: when the
secret changes (a rotated key), the next read after the cache expires picks the new value up.
"""

from __future__ import annotations

import logging
import os

from sommelier.settings import env

logger = logging.getLogger(__name__)

SECRET_KEYS = {
    "TELEGRAM_BOT_TOKEN": "telegram_bot_token",  # nosec B105 - the key's name in the secret, not its value
    "TELEGRAM_WEBHOOK_SECRET": "telegram_webhook_secret",  # nosec B105 - the key's name in the secret, not its value
    "OPENAI_API_KEY": "openai_api_key",
    "EMBEDDING_API_KEY": "embedding_api_key",
}
SECRET_ARN_VARIABLES = ("SOMMELIER_SECRETS_ARN", "TELEGRAM_WEBHOOK_SECRET_ARN")
CACHE_SECONDS = 300

# Environment variables this module filled from a secret, with the value it put there. A variable
# whose current value differs was set by someone else (the operator) and is left alone.
_copied_from_secret: dict[str, str] = {}


def secrets_configured() -> bool:
    return any(env(variable) for variable in SECRET_ARN_VARIABLES)


def _secret_document() -> dict:
    from aws_lambda_powertools.utilities import parameters

    merged: dict = {}
    for variable in SECRET_ARN_VARIABLES:
        arn = env(variable)
        if arn:
            document = parameters.get_secret(arn, transform="json", max_age=CACHE_SECONDS)
            if isinstance(document, dict):
                merged.update(document)
    return merged


def _value(document: dict, name: str) -> str | None:
    found = document.get(SECRET_KEYS[name])
    return found.strip() if isinstance(found, str) and found.strip() else None


def _set_by_operator(name: str) -> bool:
    value = env(name)
    return bool(value) and _copied_from_secret.get(name) != value


def secret(name: str) -> str | None:
    """One secret by its environment-variable name: the operator's variable, else the secret's value."""
    if _set_by_operator(name) or not secrets_configured():
        return env(name)
    return _value(_secret_document(), name) or env(name)


def load_secrets_into_environment() -> bool:
    """Copy the secrets' values into the variables the operator did not set, so load_settings() sees
    them. Call it on every invocation: it is cached, and returns True when a copied value changed
    (the caller then rebuilds what it built from the old one)."""
    if not secrets_configured():
        return False
    try:
        document = _secret_document()
    except Exception as exc:  # a missing permission must be a clear log line, not a crash loop
        logger.error("could not read the bot secrets: %s", type(exc).__name__)
        raise
    changed = False
    for variable in SECRET_KEYS:
        if _set_by_operator(variable):
            continue
        value = _value(document, variable)
        previous = _copied_from_secret.get(variable)
        if value is None:
            if previous is not None:  # the key was removed from the secret
                os.environ.pop(variable, None)
                del _copied_from_secret[variable]
                changed = True
            continue
        if value != previous:
            changed = changed or previous is not None
            os.environ[variable] = value
            _copied_from_secret[variable] = value
    return changed
