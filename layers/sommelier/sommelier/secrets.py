"""Secrets into the settings: in Lambda the bot token and the keys come from Secrets Manager JSON secrets,
read through Powertools Parameters and cached for five minutes; they go into `Settings`, never into
`os.environ`. A variable the operator set wins over the secret.

Up to three secrets, merged in this order: `SOMMELIER_SECRETS_ARN` (the bot token),
`MODEL_KEYS_SECRET_ARN` (the LLM and embedding keys) and `TELEGRAM_WEBHOOK_SECRET_ARN` (the generated
webhook secret token, kept apart so that changing a key never regenerates it). Each function is given
only the ones it uses (template.yaml), so a role that never calls the LLM can't read its key. `SettingsSource` is what a handler keeps per process: each invocation asks it for
the current settings and learns whether a secret changed (a rotated key), so it can rebuild what it
built from the old value.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from sommelier.observability.redaction import register_secret
from sommelier.settings import SECRET_VARIABLES, SettingError, Settings, load_settings

logger = logging.getLogger(__name__)

SECRET_ARN_VARIABLES = ("SOMMELIER_SECRETS_ARN", "MODEL_KEYS_SECRET_ARN", "TELEGRAM_WEBHOOK_SECRET_ARN")
CACHE_SECONDS = 300


def secret_arns(environ: Mapping[str, str]) -> list[str]:
    return [arn.strip() for name in SECRET_ARN_VARIABLES if (arn := environ.get(name, "")).strip()]


def read_secret_values(environ: Mapping[str, str], *, fresh: bool = False) -> dict[str, str]:
    """The secrets' values by the variable they stand for ({} when no secret is configured).
    ``fresh`` skips the cache (a custom resource right after the secret was created)."""
    arns = secret_arns(environ)
    if not arns:
        return {}
    from aws_lambda_powertools.utilities import parameters

    merged: dict[str, Any] = {}
    for arn in arns:
        document = parameters.get_secret(arn, transform="json", max_age=CACHE_SECONDS, force_fetch=fresh)
        if isinstance(document, dict):
            merged.update(document)
    values: dict[str, str] = {}
    for variable, key in SECRET_VARIABLES.items():
        found = merged.get(key)
        if isinstance(found, str) and found.strip():
            values[variable] = found.strip()
    return values


class SettingsSource:
    """One process's settings: the environment read once, the secrets re-read when their cache expires."""

    def __init__(self, environ: Mapping[str, str] | None = None):
        self._environ = dict(os.environ if environ is None else environ)
        self._settings: Settings | None = None
        self._secrets: dict[str, str] = {}
        # Without the secrets' values: what a handler needs before its first invocation (logging, tracing).
        # A bad setting must not fail the container's start: each invocation's current() names it.
        try:
            self.environment = load_settings(self._environ)
        except SettingError:
            self.environment = Settings()

    def current(self) -> tuple[Settings, bool]:
        """The settings now, and whether they changed since the last call (a rotated secret)."""
        try:
            secrets = read_secret_values(self._environ)
        except Exception as exc:  # a missing permission must be a clear log line, not a crash loop
            logger.error("could not read the bot secrets: %s", type(exc).__name__)
            raise
        if self._settings is not None and secrets == self._secrets:
            return self._settings, False  # the environment never changes: the same secrets, the same settings
        settings = load_settings(self._environ, secrets)
        for value in settings.secret_values():
            register_secret(value)  # masked in every log line from now on
        changed = self._settings is not None and settings != self._settings
        self._settings, self._secrets = settings, secrets
        return settings, changed

    @property
    def settings(self) -> Settings:
        return self._settings if self._settings is not None else self.current()[0]
