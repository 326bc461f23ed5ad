"""`sommelier serve`: the deployed webhook app (Starlette) under uvicorn; turns run in-process, in order per chat."""

from __future__ import annotations

import argparse
import os
import secrets as token_generator

from sommelier_dev.cli.output import console, fail

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
        from sommelier_dev.devtools.template import http_routes

        for method, path, function in http_routes():
            if function == WEBHOOK_FUNCTION and method.upper() == "POST":
                return path
    except Exception:  # cfn-lint (a dev dependency) may be missing outside a checkout  # nosec B110 - the default path is the fallback
        pass
    return DEFAULT_WEBHOOK_PATH


def build_local_server(host: str = "127.0.0.1", port: int = 0, *, workers: int = 8, process=None):
    """The deployed webhook app under uvicorn, its turns on per-chat ordered workers (also for tests and benchmarks).

    `process(update, attempt)` runs one turn; by default a bot built from the environment.
    """
    from sommelier.edge.app import create_app
    from sommelier.edge.ingress import Ingress

    from sommelier_dev.devtools.local_server import ChatOrderedWorkers, LocalServer

    if process is None:
        from sommelier.telegram.consumer import AgentContainer

        process = AgentContainer().process_update
    queue = ChatOrderedWorkers(process, workers=workers)
    app = create_app(Ingress(sink=queue), webhook_path=webhook_path())
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
    from sommelier.edge.app import HEALTH_PATH, REVISION_VARIABLE
    from sommelier.settings import env, load_settings
    from sommelier.telegram.consumer import AgentContainer

    from sommelier_dev.cli.dev_cmd import ensure_ready

    settings = load_settings()
    if not settings.telegram_bot_token:
        return fail("serve needs TELEGRAM_BOT_TOKEN (and TELEGRAM_API_BASE_URL to use a stand-in Bot API)")
    if not settings.telegram_webhook_secret:
        os.environ["TELEGRAM_WEBHOOK_SECRET"] = token_generator.token_urlsafe(32)
        console.print(f"TELEGRAM_WEBHOOK_SECRET was not set; using {os.environ['TELEGRAM_WEBHOOK_SECRET']}")
    if not env(REVISION_VARIABLE):
        revision = _git_revision()
        if revision:
            os.environ[REVISION_VARIABLE] = revision
    try:
        if not settings.tool_function_name:
            ensure_ready(quiet=True)
        container = AgentContainer()
        container.bot()  # fail now, not on the first update
    except Exception as exc:
        return fail(f"serve could not start: {exc}")
    server, queue = build_local_server(args.host, args.port, process=container.process_update)
    mode = "offline responder" if load_settings().offline else f"LLM {settings.llm_model}"
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
