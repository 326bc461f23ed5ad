"""Credentials never reach a log line: the bot token, the webhook secret, API keys, database passwords.

Three public hooks, all installed by the handler shell (sommelier.observability.shell):

* `install_record_redaction()`: a log-record factory (logging.setLogRecordFactory) rewrites each
  record as it is created, whatever logger made it: the message (with its %-arguments merged in)
  and the formatted exception. So records that reach any handler (the Lambda runtime's, pytest's
  caplog) are clean;
* `RedactingFilter`, added (Handler.addFilter) to the shell's log handler: it also masks a record's
  extra attributes in place;
* `redact()`, which the shell's Powertools formatter subclass applies to every finished JSON line
  (appended keys, extras and exceptions included).

What is masked (`redact`): the current values of the secret variables (SECRET_ENVIRONMENT, read at
each call, so values loaded from Secrets Manager at cold start count), the password inside
DATABASE_URL, values passed to `register_secret` (e.g. the database password read from a secret),
and anything shaped like a credential: Telegram bot tokens, `sk-…` keys, `Bearer …` values, the
password part of `scheme://user:password@host` URLs, `password=…` in connection strings and the
webhook secret header. Values shorter than MIN_SECRET_LENGTH are not masked by value (too likely to
be ordinary words); the patterns still apply to them. A customer's personal data is masked too
(`sommelier.language.personal`: phones, e-mails, cards, addresses and @handles written in a message; a
bare run of digits stays, since in a log line it is an id). Standard library only, besides that.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any
from urllib.parse import unquote, urlsplit

MASK = "***"
MIN_SECRET_LENGTH = 8
SECRET_ENVIRONMENT = (
    "TELEGRAM_BOT_TOKEN",
    "TELEGRAM_WEBHOOK_SECRET",
    "OPENAI_API_KEY",
    "EMBEDDING_API_KEY",
    "LANGFUSE_SECRET_KEY",
    "DATABASE_PASSWORD",
    "PGPASSWORD",
)
URL_ENVIRONMENT = ("DATABASE_URL",)

# The one Telegram bot token pattern of the code base (the Bot API client masks URLs with it too).
TELEGRAM_BOT_TOKEN = re.compile(r"(?<![0-9])\d{5,}:[A-Za-z0-9_-]{30,}")

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (TELEGRAM_BOT_TOKEN, MASK),
    (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_-]{16,}"), MASK),  # OpenAI / OpenRouter style keys
    (re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1" + MASK),
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@\"']*:)[^@\s/\"']+@"), r"\1" + MASK + "@"),  # URL user:password@
    (re.compile(r"(?i)(\bpassword\s*=\s*)(?:'[^']*'|[^\s&'\",;]+)"), r"\1" + MASK),  # conninfo / query
    (re.compile(r"(?i)(x-telegram-bot-api-secret-token['\"]?\s*[:=]\s*['\"]?)[A-Za-z0-9_-]+"), r"\1" + MASK),
    (
        re.compile(
            r"(?i)(\"(?:password|secret|api_key|token|telegram_bot_token|telegram_webhook_secret|"
            r"openai_api_key|embedding_api_key|stt_api_key)\"\s*:\s*\")[^\"]+"
        ),
        r"\1" + MASK,
    ),
]

_registered: set[str] = set()
_lock = threading.Lock()
_factory_installed = False


def register_secret(value: str | None) -> None:
    """Mask this value from now on (e.g. a password read from Secrets Manager)."""
    if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value)


_CONNINFO_PASSWORD = re.compile(r"(?:^|\s)password\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S+))")


def _url_password(url: str) -> str | None:
    """The password in a postgresql:// URL or in a key=value connection string."""
    if "://" not in url:
        match = _CONNINFO_PASSWORD.search(url)
        return (match.group(1) or match.group(2)) if match else None
    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None


def known_secrets() -> list[str]:
    """Every secret value to mask right now, longest first (so a token is masked before its prefix)."""
    import os

    values = set()
    for name in SECRET_ENVIRONMENT:
        value = (os.environ.get(name) or "").strip()
        if len(value) >= MIN_SECRET_LENGTH:
            values.add(value)
    for name in URL_ENVIRONMENT:
        password = _url_password(os.environ.get(name) or "")
        if password and len(password) >= MIN_SECRET_LENGTH:
            values.add(password)
    with _lock:
        values |= _registered
    variants = set()
    for value in values:
        variants.add(value)
        variants.add(json.dumps(value)[1:-1])  # as it appears inside a JSON log line
    return sorted(variants, key=len, reverse=True)


def redact(text: str) -> str:
    """The text with every known secret and credential-shaped value replaced by ***."""
    if not isinstance(text, str) or not text:
        return text
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    from sommelier.language.personal import mask_personal  # a customer's phone, e-mail, address or @handle

    return mask_personal(text, names=False, bare_numbers=False)


def redact_value(value: Any, depth: int = 0) -> Any:
    if depth > 6:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, depth + 1) for v in value)
    if isinstance(value, BaseException):
        return redact(f"{type(value).__name__}: {value}")
    return value


def _redact_message(record: logging.LogRecord) -> None:
    if isinstance(record.msg, str):
        try:
            message = record.getMessage()
        except Exception:  # a malformed %-format: keep what we have, masked
            message = record.msg
            record.args = tuple(redact_value(a) for a in record.args) if isinstance(record.args, tuple) else None
        else:
            record.args = None
        record.msg = redact(message)
    elif isinstance(record.msg, (dict, list)):  # Powertools structured messages
        record.msg = redact_value(record.msg)
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
    elif record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


_STANDARD_ATTRIBUTES = set(vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None))) | {"message", "asctime"}


class RedactingFilter(logging.Filter):
    """A handler filter: masks the message, the exception text and every extra attribute, in place,
    so that whatever sees the record after this handler (a later handler, pytest's caplog) sees it clean."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            _redact_message(record)
            for key, value in list(record.__dict__.items()):
                if key not in _STANDARD_ATTRIBUTES:
                    record.__dict__[key] = redact_value(value)
        except Exception:  # nosec B110 - logging must never break; the formatter still masks the line
            pass
        return True


def _install_factory() -> None:
    global _factory_installed
    with _lock:
        if _factory_installed:
            return
        _factory_installed = True
        previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            _redact_message(record)
        except Exception:  # nosec B110 - never break logging; handlers mask the final line as well
            pass
        return record

    logging.setLogRecordFactory(factory)


def install_record_redaction() -> None:
    """Mask secrets in every log record from now on, whatever logger or handler it meets (idempotent)."""
    _install_factory()
