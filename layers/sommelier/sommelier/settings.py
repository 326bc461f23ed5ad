"""Every setting of the sommelier, read once per entry point (docs/architecture.md §3).

Each entry point (a Lambda handler, the command line, `serve`) builds one `Settings` with
`load_settings(environ, secrets)` and passes it down; no other module reads the environment. Secret
values (the bot token, the LLM and embedding keys, the webhook secret) come from Secrets Manager
(`sommelier.secrets`) into this object, never into `os.environ`; a variable the operator set wins.

An empty variable counts as unset everywhere, so `FOO=` in a shell or a template parameter left blank
behaves like a missing one. A value that cannot be read is a `SettingError` naming the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import NamedTuple

DEFAULT_LLM_MODEL = "anthropic/claude-sonnet-4"
DEFAULT_OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
LOCAL_MODEL_NAME = "local-ngram-hash-v4"  # the local hashing embeddings (embeddings/local.py)
DEFAULT_TELEGRAM_API_BASE_URL = "https://api.telegram.org"
DEFAULT_STT_MODEL = "whisper-1"
EMBEDDING_DIMENSIONS = 1536
DEFAULT_HEALTH_WARNING = "Чрезмерное употребление алкоголя вредит вашему здоровью"
DEFAULT_RETENTION_DAYS = 180
DEFAULT_TURN_BUDGET_S = 60.0
DEFAULT_DELIVERY_RESERVE_S = 8.0

# The variables a secret may fill, by the key they have inside the secret's JSON.
SECRET_VARIABLES: dict[str, str] = {
    "TELEGRAM_BOT_TOKEN": "telegram_bot_token",  # nosec B105 - the key's name in the secret, not its value
    "TELEGRAM_WEBHOOK_SECRET": "telegram_webhook_secret",  # nosec B105 - the key's name in the secret, not its value
    "OPENAI_API_KEY": "openai_api_key",
    "EMBEDDING_API_KEY": "embedding_api_key",
    "STT_API_KEY": "stt_api_key",  # optional in the model keys' secret: unset, voice uses the LLM key
}
_OFF = {"0", "false", "no", "off"}
_ON = {"1", "true", "yes", "on"}


class SettingError(ValueError):
    """A setting has a value that cannot be used: a clear one-line error, not a fault to trace."""


class MissingSetting(SettingError):
    """A required setting is not configured."""


class _Reader:
    """Typed reads of one environment mapping (an empty value counts as unset)."""

    def __init__(self, environ: Mapping[str, str], secrets: Mapping[str, str]):
        self.environ = environ
        self.secrets = secrets

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.environ.get(name)
        if value is None or value.strip() == "":
            found = self.secrets.get(name)
            return found.strip() if isinstance(found, str) and found.strip() else default
        return value.strip()

    def raw(self, name: str) -> str | None:
        """The value as set, empty included (None: unset), for the settings where empty means "off"."""
        return self.environ.get(name)

    def integer(self, name: str, default: int) -> int:
        raw = self.text(name)
        if raw is None:
            return default
        try:
            return int(raw)
        except ValueError as exc:
            raise SettingError(f"{name} must be an integer, got {raw!r}") from exc

    def ids(self, name: str) -> frozenset[int]:
        """A list of Telegram ids, separated by commas or spaces (unset or empty: none)."""
        raw = self.text(name) or ""
        found: set[int] = set()
        for item in raw.replace(",", " ").split():
            try:
                found.add(int(item))
            except ValueError as exc:
                raise SettingError(f"{name} must be Telegram user ids separated by commas, got {item!r}") from exc
        return frozenset(found)

    def seconds(self, name: str, default: float) -> float:
        raw = self.text(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError as exc:
            raise SettingError(f"{name} must be a number of seconds, got {raw!r}") from exc
        if value <= 0:
            raise SettingError(f"{name} must be positive, got {raw!r}")
        return value

    def amount(self, name: str) -> float | None:
        """A positive number (dollars, minutes), or None when unset."""
        raw = self.text(name)
        if raw is None:
            return None
        try:
            value = float(raw.replace(",", "."))
        except ValueError as exc:
            raise SettingError(f"{name} must be a number, got {raw!r}") from exc
        if not value > 0 or value == float("inf"):
            raise SettingError(f"{name} must be a positive number, got {raw!r}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        raw = (self.text(name) or "").lower()
        if not raw:
            return default
        if raw in _ON:
            return True
        if raw in _OFF:
            return False
        return default


@cache  # read at import (the Settings default) and by every load_settings: the answer never changes
def project_root() -> Path:
    """The repository root in a checkout; the current directory elsewhere (Lambda)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists() and (parent / "layers").is_dir():
            return parent
    return Path.cwd()


class DatabaseSettings(NamedTuple):
    url: str | None = None  # DATABASE_URL; unset locally: the embedded server under the state folder
    secret_arn: str | None = None  # in AWS: the Aurora secret (username, password, host)
    app_secret_arn: str | None = None  # the migration's: the tool function's own login
    host: str | None = None
    port: str | None = None
    name: str | None = None
    sslmode: str = "verify-full"
    pool_size: int = 4
    connect_timeout_s: int = 20
    max_idle_s: int = 60
    statement_timeout_ms: int = 5000


class LLMSettings(NamedTuple):
    api_key: str | None = None
    base_url: str | None = None
    model: str = DEFAULT_LLM_MODEL
    timeout_s: float | None = None  # LLM_TIMEOUT_S when set (the client's default: 30 s)
    max_retries: int = 2
    response_format: str | None = None  # LLM_RESPONSE_FORMAT as set (None: json_schema, unstated)
    capabilities: str | None = None
    stream: bool = True
    stream_stall_s: float = 20.0
    turn_budget_s: float | None = None  # LLM_TURN_BUDGET_S when set
    delivery_reserve_s: float = DEFAULT_DELIVERY_RESERVE_S
    price_per_mtok: str | None = None  # "prompt,completion[,cached]" $ per million tokens (domain/pricing.py)
    prefetch: bool = True  # LLM_PREFETCH: candidates in the first call's prompt (off: the model searches first)

    @property
    def local_turn_budget_s(self) -> float:
        return self.turn_budget_s if self.turn_budget_s is not None else DEFAULT_TURN_BUDGET_S


class SpeechSettings(NamedTuple):
    """Speech to text for voice messages and video notes: an OpenAI-compatible /audio/transcriptions."""

    api_key: str | None = None  # STT_API_KEY, else OPENAI_API_KEY; None: voice is asked to be typed
    base_url: str | None = None  # STT_BASE_URL, else OPENAI_BASE_URL
    model: str = DEFAULT_STT_MODEL
    max_seconds: int = 180  # longer voice messages are asked to be shorter (cost and the turn's time)
    max_bytes: int = 10 * 1024 * 1024


class EmbeddingSettings(NamedTuple):
    provider: str = "local"
    model: str = LOCAL_MODEL_NAME
    base_url: str | None = None
    api_key: str | None = None


class TelegramSettings(NamedTuple):
    bot_token: str | None = None
    webhook_secret: str | None = None
    api_base_url: str = DEFAULT_TELEGRAM_API_BASE_URL
    bot_username: str | None = None
    progressive: bool = True
    draft_interval_s: float = 0.5
    rate_limit_per_minute: int = 10
    # BUSINESS_OWNER_IDS: the Telegram user ids whose Business accounts the bot answers in (empty: none).
    business_owner_ids: frozenset[int] = frozenset()

    def require_token(self) -> str:
        if not self.bot_token:
            raise MissingSetting("TELEGRAM_BOT_TOKEN is not set (get one from @BotFather)")
        return self.bot_token


class AwsSettings(NamedTuple):
    """What the template wires between the functions; all unset locally (in-process tools, inline turns)."""

    images_bucket: str | None = None
    tool_function_name: str | None = None
    queue_url: str | None = None
    idempotency_table: str | None = None
    report_function_name: str | None = None
    sqs_max_receives: int = 3
    secrets_arn: str | None = None
    webhook_secret_arn: str | None = None
    # The stack's webhook URL (WEBHOOK_URL): what the scheduled webhook check expects Telegram to hold.
    webhook_url: str | None = None
    lambda_task_root: str | None = None
    sam_local: bool = False


class ShopSettings(NamedTuple):
    age_gate: bool = True
    health_warning: str | None = DEFAULT_HEALTH_WARNING
    retention_days_raw: str | None = None
    admin_chat_id_raw: str | None = None
    catalog_drop_mode: str = "merge"
    name: str | None = None  # SHOP_NAME: the shop's own name, which an answer may say
    contacts: tuple[str, ...] = ()  # SHOP_CONTACTS: its own links, @handles, phones, e-mails an answer may carry

    def retention_days(self) -> int:
        """MESSAGE_RETENTION_DAYS (default 180). Raises SettingError when unreadable or out of range."""
        if self.retention_days_raw is None:
            return DEFAULT_RETENTION_DAYS
        try:
            days = int(self.retention_days_raw)
        except ValueError as exc:
            raise SettingError(f"MESSAGE_RETENTION_DAYS must be an integer, got {self.retention_days_raw!r}") from exc
        if not 1 <= days <= 3650:
            raise SettingError(f"MESSAGE_RETENTION_DAYS must be from 1 to 3650, got {days}")
        return days

    def admin_chat_id(self) -> int | None:
        """ADMIN_CHAT_ID, or None when unset. Raises SettingError when it is not an integer."""
        if self.admin_chat_id_raw is None:
            return None
        try:
            return int(self.admin_chat_id_raw)
        except ValueError as exc:
            raise SettingError(
                f"ADMIN_CHAT_ID must be a Telegram chat id (an integer), got {self.admin_chat_id_raw!r}"
            ) from exc


class AgentSettings(NamedTuple):
    max_tool_rounds: int = 2
    max_retries: int = 2


class LimitSettings(NamedTuple):
    """Spending limits that stop (telegram/limits.py; RELIABILITY.md lists them): past one, the offline
    responder answers."""

    turns_per_user_day: int = 60  # LLM_TURNS_PER_USER_DAY: LLM turns per customer (and per group) a day
    voice_minutes_per_user_day: float = 10.0  # VOICE_MINUTES_PER_USER_DAY: voice heard per customer a day
    daily_budget_usd: float | None = None  # LLM_DAILY_BUDGET_USD (unset: a tenth of the month's budget)
    monthly_budget_usd: float | None = None  # LLM_MONTHLY_BUDGET_USD (unset: no shop budget)

    @property
    def day_budget_usd(self) -> float | None:
        if self.daily_budget_usd is not None:
            return self.daily_budget_usd
        return self.monthly_budget_usd / 10 if self.monthly_budget_usd is not None else None


class ObservabilitySettings(NamedTuple):
    metrics_namespace: str = "Sommelier"
    xray_daemon: str | None = None
    trace_disabled: bool = False
    git_revision: str | None = None


# Named tuples, the parts and the whole: immutable, and a named tuple's class is built several times faster
# than a frozen dataclass's, which every cold start pays (BENCHMARKS.md). A change makes a new object
# (`settings._replace(...)`).
class Settings(NamedTuple):
    database: DatabaseSettings = DatabaseSettings()
    llm: LLMSettings = LLMSettings()
    embeddings: EmbeddingSettings = EmbeddingSettings()
    speech: SpeechSettings = SpeechSettings()
    telegram: TelegramSettings = TelegramSettings()
    aws: AwsSettings = AwsSettings()
    shop: ShopSettings = ShopSettings()
    agent: AgentSettings = AgentSettings()
    observability: ObservabilitySettings = ObservabilitySettings()
    limits: LimitSettings = LimitSettings()
    offline_forced: bool = False
    state_dir: Path = project_root() / ".sommelier"  # load_settings: SOMMELIER_STATE_DIR wins

    @property
    def offline(self) -> bool:
        """True when the bot must run on the rule-based offline responder."""
        return self.offline_forced or not self.llm.api_key

    @property
    def tracing_active(self) -> bool:
        """In Lambda with active tracing (the runtime sets the daemon address), unless turned off."""
        local = self.aws.sam_local or not self.aws.lambda_task_root
        return bool(self.observability.xray_daemon) and not self.observability.trace_disabled and not local

    def secret_values(self) -> list[str]:
        """Every credential this object holds, for the log redaction."""
        values = [
            self.telegram.bot_token,
            self.telegram.webhook_secret,
            self.llm.api_key,
            self.embeddings.api_key,
            self.speech.api_key,
        ]
        return [v for v in values if v]


def load_settings(environ: Mapping[str, str] | None = None, secrets: Mapping[str, str] | None = None) -> Settings:
    """The settings from ``environ`` (default: this process's environment) and the secrets' values
    (keyed by the variable they stand for; an operator's variable wins). Raises SettingError."""
    read = _Reader(os.environ if environ is None else environ, secrets or {})
    return Settings(
        database=_database(read),
        llm=_llm(read),
        embeddings=_embeddings(read),
        speech=_speech(read),
        telegram=_telegram(read),
        aws=_aws(read),
        shop=_shop(read),
        agent=AgentSettings(
            max_tool_rounds=read.integer("AGENT_MAX_TOOL_ROUNDS", 2), max_retries=read.integer("AGENT_MAX_RETRIES", 2)
        ),
        observability=ObservabilitySettings(
            metrics_namespace=read.text("POWERTOOLS_METRICS_NAMESPACE", "Sommelier") or "Sommelier",
            xray_daemon=read.text("AWS_XRAY_DAEMON_ADDRESS"),
            trace_disabled=read.flag("POWERTOOLS_TRACE_DISABLED", False),
            git_revision=read.text("SOMMELIER_GIT_REVISION"),
        ),
        limits=_limits(read),
        offline_forced=read.flag("SOMMELIER_OFFLINE", False),
        state_dir=Path(read.text("SOMMELIER_STATE_DIR") or project_root() / ".sommelier"),
    )


def _database(read: _Reader) -> DatabaseSettings:
    return DatabaseSettings(
        url=read.text("DATABASE_URL"),
        secret_arn=read.text("DATABASE_SECRET_ARN"),
        app_secret_arn=read.text("APP_DATABASE_SECRET_ARN"),
        host=read.text("DATABASE_HOST"),
        port=read.text("DATABASE_PORT"),
        name=read.text("DATABASE_NAME"),
        sslmode=read.text("DATABASE_SSLMODE") or "verify-full",
        pool_size=read.integer("DATABASE_POOL_SIZE", 4),
        connect_timeout_s=read.integer("DATABASE_CONNECT_TIMEOUT_S", 20),
        max_idle_s=read.integer("DATABASE_MAX_IDLE_S", 60),
        statement_timeout_ms=read.integer("DATABASE_STATEMENT_TIMEOUT_MS", 5000),
    )


def _llm(read: _Reader) -> LLMSettings:
    configured_budget = read.text("LLM_TURN_BUDGET_S")
    return LLMSettings(
        api_key=read.text("OPENAI_API_KEY"),
        base_url=read.text("OPENAI_BASE_URL"),
        model=read.text("LLM_MODEL") or DEFAULT_LLM_MODEL,
        timeout_s=read.seconds("LLM_TIMEOUT_S", 30.0) if read.text("LLM_TIMEOUT_S") else None,
        max_retries=read.integer("LLM_MAX_RETRIES", 2),
        response_format=(read.text("LLM_RESPONSE_FORMAT") or "").lower() or None,
        capabilities=read.text("LLM_CAPABILITIES"),
        stream=read.flag("LLM_STREAM", True),
        stream_stall_s=read.seconds("LLM_STREAM_STALL_S", 20.0),
        turn_budget_s=read.seconds("LLM_TURN_BUDGET_S", DEFAULT_TURN_BUDGET_S) if configured_budget else None,
        delivery_reserve_s=read.seconds("DELIVERY_RESERVE_S", DEFAULT_DELIVERY_RESERVE_S),
        price_per_mtok=read.text("LLM_PRICE_PER_MTOK"),
        prefetch=read.flag("LLM_PREFETCH", True),
    )


def _embeddings(read: _Reader) -> EmbeddingSettings:
    openai_key = read.text("OPENAI_API_KEY")
    api_key = read.text("EMBEDDING_API_KEY") or openai_key
    provider = (read.text("EMBEDDING_PROVIDER") or ("openai" if api_key else "local")).lower()
    if provider not in {"openai", "local"}:
        raise SettingError(f"EMBEDDING_PROVIDER must be 'openai' or 'local', got {provider!r}")
    default_model = DEFAULT_OPENAI_EMBEDDING_MODEL if provider == "openai" else LOCAL_MODEL_NAME
    return EmbeddingSettings(
        provider=provider,
        model=read.text("EMBEDDING_MODEL") or default_model,
        base_url=read.text("EMBEDDING_BASE_URL") or read.text("OPENAI_BASE_URL"),
        api_key=api_key,
    )


def _speech(read: _Reader) -> SpeechSettings:
    return SpeechSettings(
        api_key=read.text("STT_API_KEY") or read.text("OPENAI_API_KEY"),
        base_url=read.text("STT_BASE_URL") or read.text("OPENAI_BASE_URL"),
        model=read.text("STT_MODEL") or DEFAULT_STT_MODEL,
        max_seconds=read.integer("STT_MAX_SECONDS", 180),
        max_bytes=read.integer("STT_MAX_BYTES", 10 * 1024 * 1024),
    )


def _telegram(read: _Reader) -> TelegramSettings:
    return TelegramSettings(
        bot_token=read.text("TELEGRAM_BOT_TOKEN"),
        webhook_secret=read.text("TELEGRAM_WEBHOOK_SECRET"),
        api_base_url=read.text("TELEGRAM_API_BASE_URL") or DEFAULT_TELEGRAM_API_BASE_URL,
        bot_username=(read.text("TELEGRAM_BOT_USERNAME") or "").lstrip("@") or None,
        progressive=read.flag("TELEGRAM_PROGRESSIVE", True),
        draft_interval_s=read.integer("TELEGRAM_DRAFT_INTERVAL_MS", 500) / 1000,
        rate_limit_per_minute=read.integer("RATE_LIMIT_PER_MINUTE", 10),
        business_owner_ids=read.ids("BUSINESS_OWNER_IDS"),
    )


def _limits(read: _Reader) -> LimitSettings:
    turns = read.integer("LLM_TURNS_PER_USER_DAY", 60)
    if turns < 1:
        raise SettingError(f"LLM_TURNS_PER_USER_DAY must be 1 or more, got {turns}")
    return LimitSettings(
        turns_per_user_day=turns,
        voice_minutes_per_user_day=read.amount("VOICE_MINUTES_PER_USER_DAY") or 10.0,
        daily_budget_usd=read.amount("LLM_DAILY_BUDGET_USD"),
        monthly_budget_usd=read.amount("LLM_MONTHLY_BUDGET_USD"),
    )


def _aws(read: _Reader) -> AwsSettings:
    return AwsSettings(
        images_bucket=read.text("IMAGES_BUCKET"),
        tool_function_name=read.text("TOOL_FUNCTION_NAME"),
        queue_url=read.text("QUEUE_URL"),
        idempotency_table=read.text("IDEMPOTENCY_TABLE"),
        report_function_name=read.text("REPORT_FUNCTION_NAME"),
        sqs_max_receives=read.integer("SQS_MAX_RECEIVES", 3),
        secrets_arn=read.text("SOMMELIER_SECRETS_ARN"),
        webhook_secret_arn=read.text("TELEGRAM_WEBHOOK_SECRET_ARN"),
        webhook_url=read.text("WEBHOOK_URL"),
        lambda_task_root=read.text("LAMBDA_TASK_ROOT"),
        sam_local=bool(read.text("AWS_SAM_LOCAL")),
    )


def _shop(read: _Reader) -> ShopSettings:
    # SOMMELIER_HEALTH_WARNING: unset → the default line; set → that text; set but empty → no line.
    raw_warning = read.raw("SOMMELIER_HEALTH_WARNING")
    warning = DEFAULT_HEALTH_WARNING if raw_warning is None else (" ".join(raw_warning.split()) or None)
    mode = (read.text("CATALOG_DROP_MODE") or "merge").lower()
    return ShopSettings(
        age_gate=(read.text("SOMMELIER_AGE_GATE") or "1").lower() not in _OFF,
        health_warning=warning,
        retention_days_raw=read.text("MESSAGE_RETENTION_DAYS"),
        admin_chat_id_raw=read.text("ADMIN_CHAT_ID"),
        catalog_drop_mode=mode,
        name=read.text("SHOP_NAME"),
        contacts=tuple(c.strip() for c in (read.text("SHOP_CONTACTS") or "").split(",") if c.strip()),
    )
