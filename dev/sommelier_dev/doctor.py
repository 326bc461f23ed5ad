"""`sommelier doctor`: configuration and connectivity, one check per line, each with a fix."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sommelier.db.pool import first_row
from sommelier.settings import Settings

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"


@dataclass
class Check:
    name: str
    status: str
    detail: str
    fix: str = ""
    required: bool = True

    @property
    def blocking(self) -> bool:
        return self.status == FAIL and self.required


def _safe(name: str, required: bool, probe: Callable[[], Check]) -> Check:
    try:
        return probe()
    except Exception as exc:  # a probe that crashes is itself a finding
        first_line = (str(exc).strip().splitlines() or [""])[0][:160]
        return Check(name, FAIL, f"{type(exc).__name__}: {first_line}", "see the message above", required)


def _deployed_catalogue(settings: Settings) -> Check:
    """Deployed: only the tool function holds database credentials, so ask it."""
    from sommelier.domain.errors import PortError
    from sommelier.repositories.adapters import lambda_repositories

    try:
        stats = lambda_repositories(settings.aws.tool_function_name or "").catalog.stats()
    except PortError as exc:
        return Check(
            "tool function",
            FAIL,
            f"{settings.aws.tool_function_name}: {exc}",
            "check AWS credentials/region, the function name (WineToolsFunctionName output) and its logs",
        )
    models = stats.embedding_models
    detail = f"{settings.aws.tool_function_name}: {stats.wines} wines; embeddings {models}"
    if stats.wines == 0:
        return Check("tool function", FAIL, detail, "import the catalogue: `sommelier catalog import FILE`")
    if settings.embeddings.model not in models:
        return Check(
            "tool function",
            FAIL,
            detail + f"; queries use {settings.embeddings.model}",
            "set EMBEDDING_PROVIDER/EMBEDDING_MODEL like the agent's, or `sommelier catalog reembed`",
        )
    return Check("tool function", OK, detail)


def _database_url_without_starting(settings: Settings) -> str | None:
    """DATABASE_URL or the database secret; else the embedded server only if it already runs. A doctor
    only looks: it never initialises or starts the embedded PostgreSQL."""
    if settings.database.url or settings.database.secret_arn:
        from sommelier.db.url import resolve_database_url

        return resolve_database_url(settings)
    from sommelier.db.embedded import running_embedded_database_url

    return running_embedded_database_url(settings.state_dir / "pgdata")


def run_checks(settings: Settings) -> list[Check]:
    checks: list[Check] = []
    state: dict[str, Any] = {}  # what the database check found: its url, or that the server is stopped
    if settings.aws.tool_function_name:
        return (
            [_safe("tool function", True, lambda: _deployed_catalogue(settings))]
            + _llm_checks(settings)
            + [_bucket_check(settings)]
            + _telegram_checks(settings)
            + [shop_check(settings)]
        )

    def database() -> Check:
        url = _database_url_without_starting(settings)
        if url is None:
            pgdata = settings.state_dir / "pgdata"
            state["embedded_not_running"] = True
            never = not (pgdata / "PG_VERSION").exists()
            detail = f"no embedded database in {pgdata}" if never else f"the embedded server in {pgdata} is stopped"
            return Check("database", FAIL, detail, "run `sommelier dev up` (or `make chat`), or set DATABASE_URL")
        import psycopg

        with psycopg.connect(url, connect_timeout=5) as conn:
            version = first_row(conn.execute("SHOW server_version"))[0]
        state["url"] = url
        where = "DATABASE_URL" if settings.database.url else f"embedded server in {settings.state_dir / 'pgdata'}"
        return Check("database", OK, f"PostgreSQL {version} reachable ({where})")

    checks.append(_safe("database", True, database))
    if "url" not in state:
        if "embedded_not_running" not in state:  # that check already says how to start it
            checks[-1].fix = "set DATABASE_URL, or unset it to use the embedded server (`sommelier dev up`)"
        return (
            checks
            + _llm_checks(settings)
            + _telegram_checks(settings)
            + [_bucket_check(settings), shop_check(settings)]
        )

    def pgvector() -> Check:
        import psycopg

        with psycopg.connect(state["url"]) as conn:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        if not row:
            return Check(
                "pgvector",
                FAIL,
                "the vector extension is not installed",
                "run `sommelier dev up` (or deploy: the migrate custom resource creates it)",
            )
        return Check("pgvector", OK, f"pgvector {row[0]}")

    def migrations() -> Check:
        import psycopg
        from sommelier.db.migrations import pending_migrations

        with psycopg.connect(state["url"]) as conn:
            pending = pending_migrations(conn)
        if pending:
            return Check(
                "migrations",
                FAIL,
                "pending: " + ", ".join(m.version for m in pending),
                "run `sommelier dev up` locally; in AWS redeploy (the migrate custom resource applies them)",
            )
        return Check("migrations", OK, "schema is current")

    def catalogue() -> Check:
        import psycopg

        with psycopg.connect(state["url"]) as conn:
            rows = conn.execute("SELECT embedding_model, count(*) FROM wines GROUP BY 1").fetchall()
        total = sum(count for _, count in rows)
        if total == 0:
            return Check("catalogue", FAIL, "no wines", "run `sommelier dev up` or `sommelier catalog import FILE`")
        models = {model or "none": count for model, count in rows}
        detail = f"{total} wines; embeddings: " + ", ".join(f"{m} ({c})" for m, c in models.items())
        if settings.embeddings.model not in models:
            return Check(
                "catalogue",
                FAIL,
                detail + f"; queries use {settings.embeddings.model}",
                "run `sommelier catalog reembed`, or set EMBEDDING_PROVIDER/EMBEDDING_MODEL to the catalogue's model",
            )
        if len(models) > 1:
            return Check(
                "catalogue", WARN, detail, "run `sommelier catalog reembed` so every wine is searchable", required=False
            )
        return Check("catalogue", OK, detail)

    for name, probe in (("pgvector", pgvector), ("migrations", migrations)):
        checks.append(_safe(name, True, probe))
    if checks[-1].status == OK:
        checks.append(_safe("catalogue", True, catalogue))
    else:
        checks.append(Check("catalogue", SKIP, "not checked until the migrations are applied", required=False))
    return (
        checks + _llm_checks(settings) + [_bucket_check(settings)] + _telegram_checks(settings) + [shop_check(settings)]
    )


def _llm_checks(settings: Settings) -> list[Check]:
    if settings.offline_forced:
        return [
            Check(
                "llm",
                WARN,
                "SOMMELIER_OFFLINE=1: the rule-based offline responder answers",
                "unset SOMMELIER_OFFLINE to use the LLM",
                required=False,
            )
        ]
    if not settings.llm.api_key:
        return [
            Check(
                "llm",
                WARN,
                "no OPENAI_API_KEY: offline mode (rule-based answers, no LLM)",
                "export OPENAI_API_KEY (and OPENAI_BASE_URL for OpenRouter) to use the LLM",
                required=False,
            )
        ]

    def endpoint() -> Check:
        import openai

        client = openai.OpenAI(api_key=settings.llm.api_key, base_url=settings.llm.base_url, timeout=5, max_retries=0)
        client.models.list()
        return Check(
            "llm",
            OK,
            f"key set; {settings.llm.base_url or 'api.openai.com'} answers; model {settings.llm.model}",
            required=False,
        )

    check = _safe("llm", False, endpoint)
    if check.status == FAIL:
        check.status = WARN
        check.detail = f"key set but the endpoint did not answer ({check.detail}); turns will fall back to offline"
        check.fix = "check OPENAI_BASE_URL, the key, and the network"
    return [check]


def _bucket_check(settings: Settings) -> Check:
    name = settings.aws.images_bucket
    if not name:
        return Check(
            "photos", OK, f"local photo folder {settings.state_dir / 'photos'} (IMAGES_BUCKET unset)", required=False
        )

    def bucket() -> Check:
        import boto3

        boto3.client("s3").head_bucket(Bucket=name)
        return Check("photos", OK, f"bucket {name} reachable", required=False)

    check = _safe("photos", False, bucket)
    if check.status == FAIL:
        check.fix = "check IMAGES_BUCKET, AWS credentials and region (or AWS_ENDPOINT_URL for moto)"
    return check


def _telegram_checks(settings: Settings) -> list[Check]:
    if not settings.telegram.bot_token:
        return [
            Check(
                "telegram",
                WARN,
                "no TELEGRAM_BOT_TOKEN: only the terminal chat works",
                "export TELEGRAM_BOT_TOKEN from @BotFather for `sommelier poll` or a deploy",
                required=False,
            )
        ]

    def bot() -> Check:
        from sommelier.telegram.client import TelegramClient

        with TelegramClient.from_settings(settings.telegram) as client:
            me = client.get_me()
            info = client.get_webhook_info()
        webhook = info.url or "none (use `sommelier poll`, or `sommelier webhook set URL`)"
        extra = f"; last error: {info.last_error_message}" if getattr(info, "last_error_message", None) else ""
        return Check(
            "telegram",
            OK,
            f"bot @{me.username}; webhook: {webhook}; pending {info.pending_update_count}{extra}",
            required=False,
        )

    check = _safe("telegram", False, bot)
    if check.status == FAIL:
        check.fix = "check TELEGRAM_BOT_TOKEN (from @BotFather) and TELEGRAM_API_BASE_URL"
    return [check]


def shop_check(settings: Settings) -> Check:
    """The shop's duties: the age gate, the health warning, retention, the admin chat, drops, LLM prices."""
    from sommelier.settings import SettingError
    from sommelier.shop.catalog_drop import DropError, replace_mode
    from sommelier.shop.report import ReportError, llm_prices

    shop = settings.shop
    problems: list[str] = []
    values: dict[str, object] = {}
    reads: tuple[tuple[str, Callable[[], object], type[Exception]], ...] = (
        ("admin", shop.admin_chat_id, SettingError),
        ("days", shop.retention_days, SettingError),
        ("replace", lambda: replace_mode(shop.catalog_drop_mode), DropError),
        ("prices", lambda: llm_prices(settings.llm), ReportError),
    )
    for name, read, errors in reads:
        try:
            values[name] = read()
        except errors as exc:
            problems.append(str(exc))
    if problems:
        return Check("shop", FAIL, "; ".join(problems), "correct the setting named above", required=False)
    detail = (
        f"age gate {'on' if shop.age_gate else 'OFF'}; health warning {'on' if shop.health_warning else 'OFF'}; "
        f"messages kept {values['days']} days; catalogue drops {'replace' if values['replace'] else 'merge'}"
    )
    if values["admin"] is None:
        return Check(
            "shop",
            WARN,
            detail + "; no admin chat",
            "set ADMIN_CHAT_ID for the weekly report, catalogue-drop reports, /stats and /report",
            required=False,
        )
    return Check("shop", OK, f"{detail}; admin chat {values['admin']}", required=False)
