"""CloudFormation custom resource: apply the database schema migrations on deploy.

Create/Update -> `apply_migrations(resolve_database_url())` (CREATE EXTENSION vector + the
versioned SQL files shipped in the layer), then, when APP_DATABASE_SECRET_ARN is set, create or
update the tool function's own LOGIN user (the secret's username/password) as a member of the
data-only role `sommelier_app` (migration 0002). Delete -> nothing (the data outlives the resource).

Whatever happens, a response is PUT to the pre-signed ResponseURL, so a stack never hangs.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from typing import Any

from aws_lambda_powertools import Logger

try:
    from sommelier.db.migrations import apply_migrations
    from sommelier.db.url import resolve_database_url

    _IMPORT_ERROR: Exception | None = None
except Exception as exc:  # a broken layer must still answer CloudFormation (FAILED, not a hang)
    apply_migrations = resolve_database_url = None  # type: ignore[assignment]
    _IMPORT_ERROR = exc

logger = Logger()
try:  # mask credentials in every log line (the database URL carries the master password)
    from sommelier.logging_redaction import install_redaction

    install_redaction(logger)
except Exception:  # nosec B110 - a broken layer must still answer CloudFormation; _IMPORT_ERROR reports it
    pass

PHYSICAL_RESOURCE_ID = "sommelier-db-migrations"
MAX_REASON_CHARS = 400
SEND_ATTEMPTS = 3


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> None:
    request_type = event.get("RequestType")
    logger.append_keys(request_type=request_type, logical_resource_id=event.get("LogicalResourceId"))
    log_stream = getattr(context, "log_stream_name", "unknown")
    data: dict[str, str] = {}
    try:
        if request_type in ("Create", "Update"):
            applied = _migrate()
            data["Applied"] = ",".join(applied)
            logger.info("Migrations applied", extra={"applied": applied})
            status, reason = "SUCCESS", f"Applied {len(applied)} migration(s)"
        elif request_type == "Delete":
            status, reason = "SUCCESS", "Nothing to do on Delete"
        else:
            status, reason = "FAILED", f"Unknown RequestType {request_type!r}"
    except Exception as exc:  # report every failure to CloudFormation; never let it escape
        logger.exception("Migration failed")
        status, reason = "FAILED", _one_line(exc)
    _send(event, status, f"{reason}. Log stream: {log_stream}", data)


def _migrate() -> list[str]:
    if _IMPORT_ERROR is not None:
        raise RuntimeError(f"cannot import the migrations from the layer: {_one_line(_IMPORT_ERROR)}")
    url = resolve_database_url()
    applied = list(apply_migrations(url))
    app_secret_arn = os.environ.get("APP_DATABASE_SECRET_ARN", "").strip()
    if app_secret_arn:
        _ensure_app_user(url, app_secret_arn)
    return applied


def _ensure_app_user(url: str, secret_arn: str) -> None:
    """The tool function's LOGIN user (no DDL rights), with the password of the AppDatabaseSecret."""
    from aws_lambda_powertools.utilities import parameters
    from sommelier.db.roles import ensure_app_user

    # force_fetch: this very deployment may have just created the secret.
    secret = parameters.get_secret(secret_arn, transform="json", force_fetch=True)
    if not isinstance(secret, dict) or not secret.get("username") or not secret.get("password"):
        raise RuntimeError("the app database secret must be JSON with 'username' and 'password'")
    created = ensure_app_user(url, str(secret["username"]), str(secret["password"]))
    logger.info("App database user ready", extra={"user": secret["username"], "new_user": created})


def _one_line(exc: BaseException) -> str:
    first_line = (str(exc).strip().splitlines() or [""])[0]
    text = f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
    return text[:MAX_REASON_CHARS]


def _send(event: dict[str, Any], status: str, reason: str, data: dict[str, str]) -> None:
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason[: MAX_REASON_CHARS + 200],
            "PhysicalResourceId": PHYSICAL_RESOURCE_ID,
            "StackId": event.get("StackId"),
            "RequestId": event.get("RequestId"),
            "LogicalResourceId": event.get("LogicalResourceId"),
            "Data": data,
        }
    ).encode()
    url = event.get("ResponseURL")
    if not url:
        logger.error("The event has no ResponseURL; nothing to answer", extra={"status": status})
        return
    # The URL is signed without a content type: send an empty one (urllib would add its own).
    request = urllib.request.Request(
        url,
        data=body,
        method="PUT",
        headers={"Content-Type": "", "Content-Length": str(len(body))},
    )
    for attempt in range(1, SEND_ATTEMPTS + 1):
        try:
            with urllib.request.urlopen(request, timeout=10) as response:  # nosec B310 - the pre-signed https ResponseURL CloudFormation sent us; no user input
                logger.info("Response sent", extra={"status": status, "http_status": response.status})
                return
        except Exception:
            logger.exception("Could not send the response", extra={"attempt": attempt})
            if attempt < SEND_ATTEMPTS:
                time.sleep(attempt)
