"""`sommelier serve`: a local webhook with the template's routes; turns run in-process."""

from __future__ import annotations

import argparse
import os
import secrets as token_generator

from sommelier.cli.output import console, fail

WEBHOOK_FUNCTION = "WebhookFunction"
DEFAULT_WEBHOOK_PATH = "/telegram/webhook"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("serve", help="serve the webhook route locally and process turns in-process")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.set_defaults(run=run)


def webhook_path() -> str:
    """The webhook route from template.yaml, so local and deployed paths never drift apart."""
    try:
        from sommelier.devtools.template import http_routes

        for method, path, function in http_routes():
            if function == WEBHOOK_FUNCTION and method.upper() == "POST":
                return path
    except Exception:  # cfn-lint (a dev dependency) may be missing outside a checkout  # nosec B110 - the default path is the fallback
        pass
    return DEFAULT_WEBHOOK_PATH


def build_local_api(host: str = "127.0.0.1", port: int = 0, *, workers: int = 8):
    """The local API and its per-chat workers (also used by tests and benchmarks)."""
    from sommelier.devtools.local_api import ChatOrderedWorkers, LocalApi
    from sommelier.telegram.consumer import process_update
    from sommelier.telegram.ingress import handle_http

    queue = ChatOrderedWorkers(process_update, workers=workers)
    routes = {("POST", webhook_path()): lambda event: handle_http(event, None, sink=queue)}
    return LocalApi(routes, host=host, port=port), queue


def run(args: argparse.Namespace) -> int:
    from sommelier.cli.dev_cmd import ensure_ready
    from sommelier.config import load_settings
    from sommelier.telegram.consumer import default_bot

    settings = load_settings()
    if not settings.telegram_bot_token:
        return fail("serve needs TELEGRAM_BOT_TOKEN (and TELEGRAM_API_BASE_URL to use a stand-in Bot API)")
    if not settings.telegram_webhook_secret:
        os.environ["TELEGRAM_WEBHOOK_SECRET"] = token_generator.token_urlsafe(32)
        console.print(f"TELEGRAM_WEBHOOK_SECRET was not set; using {os.environ['TELEGRAM_WEBHOOK_SECRET']}")
    try:
        if not settings.tool_function_name:
            ensure_ready(quiet=True)
        default_bot()  # fail now, not on the first update
    except Exception as exc:
        return fail(f"serve could not start: {exc}")
    api, queue = build_local_api(args.host, args.port)
    mode = "offline responder" if load_settings().offline else f"LLM {settings.llm_model}"
    console.print(f"serving POST {api.url}{webhook_path()} ({mode}); Ctrl-C to stop")
    try:
        api.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        queue.wait_idle(timeout=30)
        queue.shutdown()
    return 0
