"""`sommelier serve`: the deployed webhook app (Starlette) under uvicorn; turns run in-process, in order per chat."""

from __future__ import annotations

import argparse
import secrets as token_generator
from typing import TYPE_CHECKING, Any

from sommelier.repositories.adapters import Repositories
from sommelier.settings import Settings
from sommelier.telegram.state import MessageLedger

from sommelier_dev.cli.output import console, fail

if TYPE_CHECKING:
    from sommelier_dev.devtools.local_server import ChatOrderedWorkers, LocalServer

WEBHOOK_FUNCTION = "WebhookFunction"
DEFAULT_WEBHOOK_PATH = "/telegram/webhook"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="serve the webhook route locally and process turns in-process")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.set_defaults(run=run)


def webhook_path() -> str:
    """The webhook route from template.yaml, so local and deployed paths never drift apart."""
    try:
        from sommelier_dev.devtools.template import http_routes

        for method, path, function in http_routes():
            if function == WEBHOOK_FUNCTION and method.upper() == "POST":
                return path
    except Exception:  # cfn-lint (a dev dependency) may be missing outside a checkout  # nosec B110 - the default path is the fallback
        pass
    return DEFAULT_WEBHOOK_PATH


def build_local_server(
    settings: Settings,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    workers: int = 8,
    process: Any = None,
    repositories: Repositories | None = None,
    ledger: MessageLedger | None = None,
) -> tuple[LocalServer, ChatOrderedWorkers]:
    """The deployed webhook app under uvicorn, its turns on per-chat ordered workers (also for tests and benchmarks).

    `process(update, attempt)` runs one turn; by default a bot built from the settings on ``repositories``
    (whose database the caller closes). The webhook and the workers share ``ledger`` (edits seen by the
    webhook reach the worker), one per process without DynamoDB.
    """
    from sommelier.edge.app import create_app
    from sommelier.edge.ingress import Ingress
    from sommelier.telegram.identity import webhook_bot_username
    from sommelier.telegram.state import ledger_from_settings

    from sommelier_dev.devtools.local_server import ChatOrderedWorkers, LocalServer

    ledger = ledger or ledger_from_settings(settings)
    if process is None:
        from sommelier.app import build_bot, build_runtime

        process = build_bot(settings, runtime=build_runtime(settings, repositories=repositories), ledger=ledger).process
    queue = ChatOrderedWorkers(process, workers=workers)
    ingress = Ingress(settings, queue, ledger=ledger, bot_username=webhook_bot_username(settings.telegram))
    app = create_app(ingress, webhook_path=webhook_path())
    return LocalServer(app, host=host, port=port), queue


def _git_revision() -> str | None:
    import subprocess  # nosec B404 - a fixed git command, no user input

    try:
        done = subprocess.run(  # nosec B603, B607 - git from PATH, fixed arguments
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    revision = done.stdout.strip() if done.returncode == 0 else ""
    return revision or None


def run(args: argparse.Namespace) -> int:
    from sommelier.app import build_bot, build_runtime
    from sommelier.edge.app import HEALTH_PATH
    from sommelier.telegram.state import ledger_from_settings

    from sommelier_dev.cli.dev_cmd import ensure_ready

    settings = args.context.settings
    if not settings.telegram.bot_token:
        return fail("serve needs TELEGRAM_BOT_TOKEN (and TELEGRAM_API_BASE_URL to use a stand-in Bot API)")
    if not settings.telegram.webhook_secret:
        secret = token_generator.token_urlsafe(32)
        settings = settings._replace(telegram=settings.telegram._replace(webhook_secret=secret))
        console.print(f"TELEGRAM_WEBHOOK_SECRET was not set; using {secret}")
    if not settings.observability.git_revision:
        revision = _git_revision()
        if revision:
            observability = settings.observability._replace(git_revision=revision)
            settings = settings._replace(observability=observability)
    ledger = ledger_from_settings(settings)
    try:
        if not settings.aws.tool_function_name:
            ensure_ready(args.context, quiet=True)
        runtime = build_runtime(settings, repositories=args.context.repositories())
        bot = build_bot(settings, runtime=runtime, ledger=ledger)  # fails now, not on the first update
    except Exception as exc:
        return fail(f"serve could not start: {exc}")
    server, queue = build_local_server(settings, args.host, args.port, process=bot.process, ledger=ledger)
    mode = "offline responder" if settings.offline else f"LLM {settings.llm.model}"
    base = f"http://{args.host}:{args.port}"
    console.print(f"serving POST {base}{webhook_path()} and GET {base}{HEALTH_PATH} ({mode}); Ctrl-C to stop")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        queue.wait_idle(timeout=30)
        queue.shutdown()
    return 0
