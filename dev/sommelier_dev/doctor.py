"""`sommelier doctor`: configuration and connectivity, one check per line, each with a fix (in Russian: the
owner reads it)."""

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
        return Check(name, FAIL, f"{type(exc).__name__}: {first_line}", "см. сообщение выше", required)


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
            "проверьте ключи и регион AWS, имя функции (вывод WineToolsFunctionName) и её журнал",
        )
    models = stats.embedding_models
    detail = (
        f"{settings.aws.tool_function_name}: {stats.wines} вин, в продаже {stats.available},"
        f" нет в продаже {stats.unavailable}; эмбеддинги {models}"
    )
    if stats.wines == 0:
        return Check("tool function", FAIL, detail, "импортируйте каталог: `sommelier catalog import FILE`")
    if settings.embeddings.model not in models:
        return Check(
            "tool function",
            FAIL,
            detail + f"; запросы считаются моделью {settings.embeddings.model}",
            "задайте EMBEDDING_PROVIDER/EMBEDDING_MODEL как у агента или выполните `sommelier catalog reembed`",
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
            detail = f"встроенной базы в {pgdata} нет" if never else f"встроенный сервер в {pgdata} остановлен"
            return Check(
                "database", FAIL, detail, "запустите `sommelier dev up` (или `make chat`) или задайте DATABASE_URL"
            )
        import psycopg

        with psycopg.connect(url, connect_timeout=5) as conn:
            version = first_row(conn.execute("SHOW server_version"))[0]
        state["url"] = url
        where = "DATABASE_URL" if settings.database.url else f"встроенный сервер в {settings.state_dir / 'pgdata'}"
        return Check("database", OK, f"PostgreSQL {version} отвечает ({where})")

    checks.append(_safe("database", True, database))
    if "url" not in state:
        if "embedded_not_running" not in state:  # that check already says how to start it
            checks[
                -1
            ].fix = "задайте DATABASE_URL или уберите его, чтобы работал встроенный сервер (`sommelier dev up`)"
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
                "расширение vector не установлено",
                "запустите `sommelier dev up` (в AWS его создаёт развёртывание)",
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
                "не применены: " + ", ".join(m.version for m in pending),
                "локально запустите `sommelier dev up`; в AWS разверните заново (миграции применит развёртывание)",
            )
        return Check("migrations", OK, "схема базы актуальна")

    def catalogue() -> Check:
        import psycopg
        from sommelier.toolfn.catalog_sql import catalog_stats

        from sommelier_dev.catalog_advice import improvements

        with psycopg.connect(state["url"]) as conn:
            stats = catalog_stats(conn, {})
        if stats.wines == 0:
            return Check(
                "catalogue",
                FAIL,
                "нет ни одного вина",
                "запустите `sommelier dev up` или `sommelier catalog import FILE`",
            )
        models = stats.embedding_models
        detail = (
            f"{stats.wines} вин: в продаже {stats.available}, нет в продаже {stats.unavailable}; эмбеддинги: "
            + ", ".join(f"{m or 'нет'} ({c})" for m, c in models.items())
        )
        if settings.embeddings.model not in models:
            return Check(
                "catalogue",
                FAIL,
                detail + f"; запросы считаются моделью {settings.embeddings.model}",
                "выполните `sommelier catalog reembed` или задайте EMBEDDING_PROVIDER/EMBEDDING_MODEL как у каталога",
            )
        if len(models) > 1:
            return Check(
                "catalogue",
                WARN,
                detail,
                "выполните `sommelier catalog reembed`, чтобы искались все вина",
                required=False,
            )
        advice = improvements(stats)
        if stats.available == 0 or advice:
            # for sale and not, apart; the largest gap first (`sommelier catalog stats` lists the rest)
            return Check("catalogue", OK if stats.available else FAIL, detail, "улучшить первым: " + advice[0])
        return Check("catalogue", OK, detail)

    for name, probe in (("pgvector", pgvector), ("migrations", migrations)):
        checks.append(_safe(name, True, probe))
    if checks[-1].status == OK:
        checks.append(_safe("catalogue", True, catalogue))
    else:
        checks.append(Check("catalogue", SKIP, "не проверен, пока не применены миграции", required=False))
    return (
        checks + _llm_checks(settings) + [_bucket_check(settings)] + _telegram_checks(settings) + [shop_check(settings)]
    )


def _llm_checks(settings: Settings) -> list[Check]:
    if settings.offline_forced:
        return [
            Check(
                "llm",
                WARN,
                "SOMMELIER_OFFLINE=1: отвечает офлайн-сомелье по правилам",
                "уберите SOMMELIER_OFFLINE, чтобы отвечала модель",
                required=False,
            )
        ]
    if not settings.llm.api_key:
        return [
            Check(
                "llm",
                WARN,
                "нет OPENAI_API_KEY: офлайн-режим (ответы по правилам, без модели)",
                "задайте OPENAI_API_KEY (и OPENAI_BASE_URL для OpenRouter), чтобы отвечала модель",
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
            f"ключ задан; {settings.llm.base_url or 'api.openai.com'} отвечает; модель {settings.llm.model}",
            required=False,
        )

    check = _safe("llm", False, endpoint)
    if check.status == FAIL:
        check.status = WARN
        check.detail = f"ключ задан, но сервер модели не ответил ({check.detail}); ответы пойдут офлайн"
        check.fix = "проверьте OPENAI_BASE_URL, ключ и сеть"
    return [check]


def _bucket_check(settings: Settings) -> Check:
    name = settings.aws.images_bucket
    if not name:
        return Check(
            "photos", OK, f"папка фото {settings.state_dir / 'photos'} (IMAGES_BUCKET не задан)", required=False
        )

    def bucket() -> Check:
        import boto3

        boto3.client("s3").head_bucket(Bucket=name)
        return Check("photos", OK, f"бакет {name} доступен", required=False)

    check = _safe("photos", False, bucket)
    if check.status == FAIL:
        check.fix = "проверьте IMAGES_BUCKET, ключи и регион AWS (или AWS_ENDPOINT_URL для moto)"
    return check


def _telegram_checks(settings: Settings) -> list[Check]:
    if not settings.telegram.bot_token:
        return [
            Check(
                "telegram",
                WARN,
                "нет TELEGRAM_BOT_TOKEN: работает только чат в терминале",
                "задайте TELEGRAM_BOT_TOKEN от @BotFather для `sommelier poll` или развёртывания",
                required=False,
            )
        ]

    def bot() -> Check:
        from sommelier.telegram.client import TelegramClient

        with TelegramClient.from_settings(settings.telegram) as client:
            me = client.get_me()
            info = client.get_webhook_info()
        webhook = info.url or "нет (используйте `sommelier poll` или `sommelier webhook set URL`)"
        extra = f"; последняя ошибка: {info.last_error_message}" if getattr(info, "last_error_message", None) else ""
        return Check(
            "telegram",
            OK,
            f"бот @{me.username}; вебхук: {webhook}; в очереди {info.pending_update_count}{extra}",
            required=False,
        )

    check = _safe("telegram", False, bot)
    if check.status == FAIL:
        check.fix = "проверьте TELEGRAM_BOT_TOKEN (от @BotFather) и TELEGRAM_API_BASE_URL"
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
        return Check("shop", FAIL, "; ".join(problems), "исправьте названную настройку", required=False)
    detail = (
        f"вопрос о возрасте {'вкл.' if shop.age_gate else 'ВЫКЛ.'}; предупреждение о вреде"
        f" {'вкл.' if shop.health_warning else 'ВЫКЛ.'}; переписка хранится {values['days']} дней;"
        f" файлы каталога {'заменяют каталог' if values['replace'] else 'добавляются'}"
    )
    if values["admin"] is None:
        return Check(
            "shop",
            WARN,
            detail + "; чат администратора не задан",
            "задайте ADMIN_CHAT_ID: туда приходят недельный отчёт, отчёты о загрузке каталога, /stats и /report",
            required=False,
        )
    return Check("shop", OK, f"{detail}; чат администратора {values['admin']}", required=False)
