"""The HTTP edge: one Starlette app, run by Mangum in Lambda and by uvicorn for `sommelier serve`.

Routes:
* POST WEBHOOK_PATH (the template's route) - Telegram's updates, through `Ingress`: the secret is
  checked before the body is read, the body is read up to MAX_BODY_BYTES, the update is enqueued
  and the answer goes out at once (the turn runs elsewhere: SQS, or the local per-chat workers);
* GET /health - version, build revision and whether the queue, idempotency table, bot token, bot
  username and webhook secret are configured (booleans only: no secret, no ARN, no URL).

Every piece of state (duplicate filter, idempotent enqueue, bot username) lives in the `Ingress`
held by the app, so two apps in one process never share it.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sommelier.edge.ingress import MAX_BODY_BYTES, Ingress
from sommelier.settings import SettingError, Settings

if TYPE_CHECKING:
    from mangum import Mangum

logger = logging.getLogger(__name__)

WEBHOOK_PATH = "/telegram/webhook"  # the WebhookFunction's HttpApi route in template.yaml (a test keeps them equal)
HEALTH_PATH = "/health"


async def _read_limited(request: Request) -> bytes | None:
    """The body, or None when it is over MAX_BODY_BYTES (declared or actually sent)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def health(ingress: Ingress) -> dict[str, Any]:
    from sommelier import __version__

    settings = ingress.settings
    queue = bool(settings.aws.queue_url)
    return {
        "ok": True,
        "version": __version__,
        "revision": settings.observability.git_revision,  # SOMMELIER_GIT_REVISION; `serve` fills it from git
        "queue": queue,
        "mode": "queue" if queue else "inline",
        "idempotency_table": bool(settings.aws.idempotency_table),
        "bot_token": bool(settings.telegram.bot_token),  # the deployed webhook never holds it: false there
        "bot_username": bool(settings.telegram.bot_username),
        "webhook_secret": bool(settings.telegram.webhook_secret),
    }


def create_app(ingress: Ingress, *, webhook_path: str = WEBHOOK_PATH) -> Starlette:

    async def webhook(request: Request) -> JSONResponse:
        if not await run_in_threadpool(ingress.authorized, request.headers):
            return JSONResponse({"ok": False, "error": "unauthorized"}, status_code=401)
        body = await _read_limited(request)
        if body is None:
            return JSONResponse({"ok": False, "error": "body too large"}, status_code=413)
        status, answer = await run_in_threadpool(ingress.handle, body, request.scope.get("aws.context"))
        return JSONResponse(answer, status_code=status)

    async def health_check(request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(health, ingress))

    app = Starlette(
        routes=[
            Route(webhook_path, webhook, methods=["POST"]),
            Route(HEALTH_PATH, health_check, methods=["GET"]),
        ]
    )
    app.state.ingress = ingress
    return app


def _answer(status: int, body: dict[str, Any]) -> dict[str, Any]:
    import json

    return {"statusCode": status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def http_api_event(event: Any) -> dict[str, Any] | None:
    """The event as a well-formed HTTP API payload 2.0, or None when it can't be one.

    Mangum trusts API Gateway's shape (a KeyError or a base64 error would be a 500, which Telegram
    redelivers forever); the function is also invoked by hand (`sommelier invoke`, tests), so odd
    events get the webhook's own 4xx instead.
    """
    if not isinstance(event, dict):
        return None
    raw_context = event.get("requestContext")
    context: dict[str, Any] = raw_context if isinstance(raw_context, dict) else {}
    raw_http = context.get("http")
    http: dict[str, Any] = raw_http if isinstance(raw_http, dict) else {}
    path = event.get("rawPath") if isinstance(event.get("rawPath"), str) else http.get("path")
    path = path if isinstance(path, str) and path else WEBHOOK_PATH
    return {
        **event,
        "version": "2.0",
        "rawPath": path,
        "rawQueryString": _text(event.get("rawQueryString"), ""),
        "headers": _lowered_headers(event.get("headers")),
        "cookies": _strings(event.get("cookies")),
        "body": _text(event.get("body"), ""),
        "isBase64Encoded": event.get("isBase64Encoded") is True,
        "requestContext": {
            **context,
            "http": {
                **http,
                "method": _text(http.get("method"), "POST").upper(),
                "path": path,
                "sourceIp": _text(http.get("sourceIp"), "0.0.0.0"),  # nosec B104 - a label, nothing listens
            },
        },
    }


def _text(value: object, default: str) -> str:
    return value if isinstance(value, str) else default


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _lowered_headers(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {k.lower(): v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


class LambdaWebhook:
    """The Lambda handler: Mangum (HTTP API payload 2.0) around the Starlette app. ``build`` makes the
    app from the current settings; it is made again when a secret changed (a rotated webhook secret)."""

    def __init__(self, build: Callable[[Settings], Starlette], settings: Callable[[], tuple[Settings, bool]]):
        self._build = build
        self._settings = settings
        self.app: Starlette | None = None
        self._mangum: Mangum | None = None

    def _current(self) -> Mangum:
        settings, changed = self._settings()
        if self._mangum is None or changed:
            from mangum import Mangum

            self.app = self._build(settings)
            self._mangum = Mangum(self.app, lifespan="off")
        return self._mangum

    def __call__(self, event: Any, context: Any) -> dict[str, Any]:
        normalized = http_api_event(event)
        if normalized is None:
            return _answer(400, {"ok": False, "error": "bad request"})
        if normalized["isBase64Encoded"]:
            try:
                base64.b64decode(normalized["body"], validate=True)
            except (binascii.Error, ValueError):
                return _answer(400, {"ok": False, "error": "invalid base64 body"})
        else:
            try:
                normalized["body"].encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: Mangum's strict encode would crash; send the bytes
                raw = normalized["body"].encode("utf-8", errors="surrogatepass")
                normalized = {**normalized, "body": base64.b64encode(raw).decode("ascii"), "isBase64Encoded": True}
        try:
            mangum = self._current()
        except SettingError as exc:  # a configuration problem: one clear line, and Telegram redelivers
            logger.error("could not process the update: %s (Telegram will redeliver)", exc)
            return _answer(503, {"ok": False, "error": "try again"})
        return mangum(normalized, context)
