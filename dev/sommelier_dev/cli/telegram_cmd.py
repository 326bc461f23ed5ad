"""`sommelier webhook set URL | info | delete` and `sommelier poll` (real Telegram, no deploy)."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from sommelier.telegram.registration import ALLOWED_UPDATES, menu_commands

from sommelier_dev.cli.output import console, fail, print_json

if TYPE_CHECKING:
    from sommelier.telegram.client import TelegramClient


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hook = sub.add_parser("webhook", help="manage the Telegram webhook (uses TELEGRAM_BOT_TOKEN)")
    actions = hook.add_subparsers(dest="action", required=True)
    set_ = actions.add_parser("set", help="point Telegram at URL with the secret token")
    set_.add_argument("url")
    set_.add_argument("--drop-pending", action="store_true", help="discard updates waiting at Telegram")
    set_.set_defaults(run=run_set)
    actions.add_parser("info", help="show the webhook Telegram has").set_defaults(run=run_info)
    delete = actions.add_parser("delete", help="remove the webhook (needed before `poll`)")
    delete.add_argument("--drop-pending", action="store_true")
    delete.set_defaults(run=run_delete)

    poll = sub.add_parser("poll", help="run the bot against real Telegram by long polling")
    poll.add_argument("--timeout", type=int, default=25, help="long-poll seconds per request")
    poll.add_argument("--max-updates", type=int, default=0, help="stop after N updates (0: run until Ctrl-C)")
    poll.add_argument("--idle-exit", type=float, default=0, help="stop after this many seconds without updates")
    poll.set_defaults(run=run_poll)


def _client(args: argparse.Namespace) -> TelegramClient:
    from sommelier.telegram.client import TelegramClient

    return TelegramClient.from_settings(args.context.settings.telegram)


def run_set(args: argparse.Namespace) -> int:
    from sommelier.telegram.client import TelegramError

    if not args.url.startswith("https://"):
        return fail("Telegram needs an https:// webhook URL (see the WebhookUrl stack output)")
    token = args.context.settings.telegram.webhook_secret
    if not token:
        return fail("TELEGRAM_WEBHOOK_SECRET is not set (or SOMMELIER_SECRETS_ARN to read it from the stack)")
    try:
        with _client(args) as client:
            client.set_webhook(
                args.url,
                secret_token=token,
                allowed_updates=list(ALLOWED_UPDATES),
                drop_pending_updates=args.drop_pending,
            )
            commands = menu_commands()
            client.set_my_commands(commands)
    except (TelegramError, ValueError) as exc:
        return fail(f"setWebhook failed: {exc}")
    console.print(f"[green]webhook set[/]: {args.url}")
    console.print("menu: " + " ".join(f"/{c['command']}" for c in commands))
    return 0


def run_info(args: argparse.Namespace) -> int:
    from sommelier.telegram.client import TelegramError

    try:
        with _client(args) as client:
            info = client.get_webhook_info()
    except (TelegramError, ValueError) as exc:
        return fail(f"getWebhookInfo failed: {exc}")
    print_json(info.model_dump(exclude_none=True))
    return 0


def run_delete(args: argparse.Namespace) -> int:
    from sommelier.telegram.client import TelegramError

    try:
        with _client(args) as client:
            client.delete_webhook(drop_pending_updates=args.drop_pending)
    except (TelegramError, ValueError) as exc:
        return fail(f"deleteWebhook failed: {exc}")
    console.print("[green]webhook deleted[/]")
    return 0


def run_poll(args: argparse.Namespace) -> int:
    from sommelier.app import build_bot, build_runtime
    from sommelier.telegram.client import TelegramError

    from sommelier_dev.cli.dev_cmd import ensure_ready

    settings = args.context.settings
    try:
        _client(args).close()  # checks the token early
        if not settings.aws.tool_function_name:
            ensure_ready(args.context, quiet=True)
        bot = build_bot(settings, runtime=build_runtime(settings, repositories=args.context.repositories()))
    except Exception as exc:
        return fail(f"poll could not start: {exc}")
    console.print("polling Telegram for updates; Ctrl-C to stop")
    offset = None
    handled = 0
    last_update = time.monotonic()
    try:
        while True:
            try:
                updates = bot.client.get_updates(
                    offset=offset, timeout=args.timeout, allowed_updates=list(ALLOWED_UPDATES)
                )
            except TelegramError as exc:
                if getattr(exc, "error_code", None) == 409:
                    return fail("a webhook is set: run `sommelier webhook delete` first")
                console.print(f"getUpdates failed: {exc}; retrying")
                time.sleep(2)
                continue
            for update in updates:
                offset = update["update_id"] + 1
                last_update = time.monotonic()
                for attempt in (1, 2, 3):
                    try:
                        bot.process(update, attempt)
                        break
                    except Exception as exc:
                        console.print(f"update {update['update_id']} failed (attempt {attempt}): {exc}")
                handled += 1
                if args.max_updates and handled >= args.max_updates:
                    return 0
            if args.idle_exit and time.monotonic() - last_update >= args.idle_exit:
                return 0
    except KeyboardInterrupt:
        return 0
