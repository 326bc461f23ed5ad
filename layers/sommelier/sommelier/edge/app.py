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
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sommelier.edge.ingress import MAX_BODY_BYTES, Ingress
from sommelier.settings import env

WEBHOOK_PATH = "/telegram/webhook"  # the WebhookFunction's HttpApi route in template.yaml (a test keeps them equal)
HEALTH_PATH = "/health"
REVISION_VARIABLE = "SOMMELIER_GIT_REVISION"  # set at build or deploy time; `serve` fills it from git


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
    from sommelier.secrets import secret

    queue = bool(env("QUEUE_URL"))
    return {
        "ok": True,
        "version": __version__,
        "revision": env(REVISION_VARIABLE),
        "queue": queue,
        "mode": "queue" if queue else "inline",
        "idempotency_table": bool(env("IDEMPOTENCY_TABLE")),
        "bot_token": bool(secret("TELEGRAM_BOT_TOKEN")),  # the deployed webhook never holds it: false there
        "bot_username": bool(env("TELEGRAM_BOT_USERNAME")),
        "webhook_secret": bool(secret("TELEGRAM_WEBHOOK_SECRET")),
    }


def create_app(ingress: Ingress | None = None, *, webhook_path: str = WEBHOOK_PATH) -> Starlette:
    ingress = ingress or Ingress()

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
    raw_headers = event.get("headers")
    headers = (
        {k.lower(): v for k, v in raw_headers.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(raw_headers, dict)
        else {}
    )
    context = event.get("requestContext") if isinstance(event.get("requestContext"), dict) else {}
    http = context.get("http") if isinstance(context.get("http"), dict) else {}
    path = event.get("rawPath") if isinstance(event.get("rawPath"), str) else http.get("path")
    method = http.get("method") if isinstance(http.get("method"), str) else "POST"
    body = event.get("body")
    return {
        **event,
        "version": "2.0",
        "rawPath": path if isinstance(path, str) and path else WEBHOOK_PATH,
        "rawQueryString": event.get("rawQueryString") if isinstance(event.get("rawQueryString"), str) else "",
        "headers": headers,
        "cookies": [c for c in event.get("cookies") or [] if isinstance(c, str)]
        if isinstance(event.get("cookies"), list)
        else [],
        "body": body if isinstance(body, str) else "",
        "isBase64Encoded": event.get("isBase64Encoded") is True,
        "requestContext": {
            **context,
            "http": {
                **http,
                "method": method.upper(),
                "path": path if isinstance(path, str) and path else WEBHOOK_PATH,
                "sourceIp": http.get("sourceIp") if isinstance(http.get("sourceIp"), str) else "0.0.0.0",  # nosec B104 - a label, nothing listens
            },
        },
    }


class LambdaWebhook:
    """The Lambda handler: Mangum (HTTP API payload 2.0) around the Starlette app."""

    def __init__(self, app: Starlette):
        from mangum import Mangum

        self.app = app
        self._mangum = Mangum(app, lifespan="off")

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
        return self._mangum(normalized, context)
