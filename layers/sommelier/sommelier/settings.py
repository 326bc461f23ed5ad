"""Configuration from environment variables (names are a contract: docs/architecture.md).

An empty variable counts as unset everywhere, so `FOO=` in a shell or a template
parameter left blank behaves like a missing one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_LLM_MODEL = "anthropic/claude-sonnet-4"
DEFAULT_OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
LOCAL_MODEL_NAME = "local-ngram-hash-v4"  # the local hashing embeddings (embeddings/local.py)
DEFAULT_TELEGRAM_API_BASE_URL = "https://api.telegram.org"
EMBEDDING_DIMENSIONS = 1536


class MissingSetting(ValueError):
    """A required setting is not configured: a clear one-line error, not a fault to trace."""


def env(name: str, default: str | None = None) -> str | None:
    """Read an environment variable, treating an empty value as unset."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip()


def env_int(name: str, default: int) -> int:
    raw = env(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc


def env_flag(name: str) -> bool:
    return (env(name) or "").lower() in {"1", "true", "yes", "on"}


def project_root() -> Path:
    """The repository root in a checkout; the current directory elsewhere (Lambda)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists() and (parent / "layers").is_dir():
            return parent
    return Path.cwd()


@dataclass(frozen=True)
class Settings:
    database_url: str | None
    openai_api_key: str | None
    openai_base_url: str | None
    llm_model: str
    embedding_provider: str
    embedding_model: str
    embedding_base_url: str | None
    embedding_api_key: str | None
    telegram_bot_token: str | None
    telegram_webhook_secret: str | None
    telegram_api_base_url: str
    images_bucket: str | None
    tool_function_name: str | None
    queue_url: str | None
    idempotency_table: str | None
    offline_forced: bool
    state_dir: Path = field(default_factory=lambda: Path(env("SOMMELIER_STATE_DIR") or project_root() / ".sommelier"))

    @property
    def offline(self) -> bool:
        """True when the bot must run on the rule-based offline responder."""
        return self.offline_forced or not self.openai_api_key


def load_settings() -> Settings:
    openai_key = env("OPENAI_API_KEY")
    provider = (
        env("EMBEDDING_PROVIDER") or ("openai" if (env("EMBEDDING_API_KEY") or openai_key) else "local")
    ).lower()
    if provider not in {"openai", "local"}:
        raise ValueError(f"EMBEDDING_PROVIDER must be 'openai' or 'local', got {provider!r}")
    default_model = DEFAULT_OPENAI_EMBEDDING_MODEL if provider == "openai" else LOCAL_MODEL_NAME
    return Settings(
        database_url=env("DATABASE_URL"),
        openai_api_key=openai_key,
        openai_base_url=env("OPENAI_BASE_URL"),
        llm_model=env("LLM_MODEL", DEFAULT_LLM_MODEL) or DEFAULT_LLM_MODEL,
        embedding_provider=provider,
        embedding_model=env("EMBEDDING_MODEL", default_model) or default_model,
        embedding_base_url=env("EMBEDDING_BASE_URL") or env("OPENAI_BASE_URL"),
        embedding_api_key=env("EMBEDDING_API_KEY") or openai_key,
        telegram_bot_token=env("TELEGRAM_BOT_TOKEN"),
        telegram_webhook_secret=env("TELEGRAM_WEBHOOK_SECRET"),
        telegram_api_base_url=env("TELEGRAM_API_BASE_URL", DEFAULT_TELEGRAM_API_BASE_URL)
        or DEFAULT_TELEGRAM_API_BASE_URL,
        images_bucket=env("IMAGES_BUCKET"),
        tool_function_name=env("TOOL_FUNCTION_NAME"),
        queue_url=env("QUEUE_URL"),
        idempotency_table=env("IDEMPOTENCY_TABLE"),
        offline_forced=env_flag("SOMMELIER_OFFLINE"),
    )
