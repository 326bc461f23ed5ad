"""CloudFormation custom resource: apply the database schema migrations on deploy.

Create/Update -> `apply_migrations(resolve_database_url(settings))` (CREATE EXTENSION vector + the
versioned SQL files shipped in the layer), then, when APP_DATABASE_SECRET_ARN is set, create or
update the tool function's own LOGIN user (the secret's username/password) as a member of the
data-only role `sommelier_app` (migration 0002). Delete -> nothing (the data outlives the resource).

`sommelier.deploy.custom_resource.respond` answers CloudFormation whatever happens, within the function's
time: the connect and the migration lock get timeouts out of the budget, and every other import
(psycopg, Powertools, the domain) happens inside the guarded work, so a broken layer is a FAILED.
"""

from __future__ import annotations

from typing import Any

from sommelier.deploy.custom_resource import FAILED, SUCCESS, Budget, Outcome, respond  # standard library only

PHYSICAL_RESOURCE_ID = "sommelier-db-migrations"
CONNECT_TIMEOUT_S = 10.0
# Shares of the work's time: connecting, waiting for the migration lock, any one statement (a migration).
CONNECT_SHARE = 0.5
LOCK_SHARE = 0.7
STATEMENT_SHARE = 0.85


def handler(event: dict[str, Any], context: Any) -> None:
    respond(event, context, _work, physical_id=PHYSICAL_RESOURCE_ID)


def _work(event: dict[str, Any], budget: Budget) -> Outcome:
    from sommelier.observability.shell import custom_resource_logger

    logger = custom_resource_logger("sommelier-migrate", event)
    request_type = event.get("RequestType")
    if request_type == "Delete":
        return Outcome(SUCCESS, "Nothing to do on Delete", PHYSICAL_RESOURCE_ID)
    if request_type not in ("Create", "Update"):
        return Outcome(FAILED, f"Unknown RequestType {request_type!r}", PHYSICAL_RESOURCE_ID)
    applied = _migrate(budget)
    logger.info("Migrations applied", extra={"applied": applied})
    return Outcome(
        SUCCESS, f"Applied {len(applied)} migration(s)", PHYSICAL_RESOURCE_ID, {"Applied": ",".join(applied)}
    )


def _migrate(budget: Budget) -> list[str]:
    from sommelier.db.migrations import apply_migrations
    from sommelier.db.url import resolve_database_url
    from sommelier.settings import load_settings

    settings = load_settings()  # this entry point's settings (the database secret's ARN, TLS)
    url = resolve_database_url(settings)
    left = budget.timeout(budget.remaining())
    # The server gives up first (a lock, then any statement), so the answer carries its reason;
    # the watchdog in `respond` stays the backstop.
    applied = list(
        apply_migrations(
            url,
            connect_timeout_s=min(CONNECT_TIMEOUT_S, left * CONNECT_SHARE),
            lock_timeout_s=left * LOCK_SHARE,
            statement_timeout_s=left * STATEMENT_SHARE,
        )
    )
    if settings.database.app_secret_arn:
        _ensure_app_user(url, settings.database.app_secret_arn, budget)
    return applied


def _ensure_app_user(url: str, secret_arn: str, budget: Budget) -> None:
    """The tool function's LOGIN user (no DDL rights), with the password of the AppDatabaseSecret."""
    from aws_lambda_powertools.utilities import parameters
    from sommelier.db.roles import ensure_app_user
    from sommelier.observability.shell import custom_resource_logger

    # force_fetch: this very deployment may have just created the secret.
    secret = parameters.get_secret(secret_arn, transform="json", force_fetch=True)
    if not isinstance(secret, dict) or not secret.get("username") or not secret.get("password"):
        raise RuntimeError("the app database secret must be JSON with 'username' and 'password'")
    created = ensure_app_user(
        url, str(secret["username"]), str(secret["password"]), connect_timeout_s=budget.timeout(CONNECT_TIMEOUT_S)
    )
    custom_resource_logger("sommelier-migrate").info(
        "App database user ready", extra={"user": secret["username"], "new_user": created}
    )
