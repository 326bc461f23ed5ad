"""`sommelier qr SKU... --out DIR`: printable shelf labels, a QR code of each wine's deep link with its name."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from sommelier.settings import TelegramSettings

from sommelier_dev.cli.output import console, fail


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("qr", help="write printable PNG QR codes that open a wine's card in the bot")
    parser.add_argument("refs", nargs="+", metavar="SKU", help="the wines' skus (or catalogue ids)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNG files (created if missing)")
    parser.add_argument("--bot", help="the bot's @username (default: TELEGRAM_BOT_USERNAME, or getMe with the token)")
    parser.set_defaults(run=run)


def _bot_username(explicit: str | None, settings: TelegramSettings) -> str:
    from sommelier.telegram.client import TelegramClient

    name = explicit or settings.bot_username
    if name:
        return name.lstrip("@")
    if not settings.bot_token:
        raise ValueError("the bot's username is unknown: pass --bot @name or set TELEGRAM_BOT_USERNAME")
    with TelegramClient.from_settings(settings) as client:
        username = client.get_me().username
    if not username:
        raise ValueError("getMe returned no username: pass --bot @name")
    return username


def run(args: argparse.Namespace) -> int:
    from sommelier.domain.errors import PortError
    from sommelier.shop.deeplinks import DeepLinkError, wine_link

    from sommelier_dev.qr import label_filename, label_png

    try:
        bot = _bot_username(args.bot, args.context.settings.telegram)
        links = {ref: wine_link(bot, ref) for ref in args.refs}  # bad refs fail before any file is written
        result = args.context.repositories().shop.find_wines(args.refs)
    except PortError as exc:
        return fail(f"the catalogue could not be read: {exc}")
    except (DeepLinkError, ValueError) as exc:
        return fail(str(exc))
    except Exception as exc:
        return fail(f"qr failed: {exc}")
    if result.missing:
        return fail("not in the catalogue: " + ", ".join(result.missing) + " (no files written)")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        for found in result.wines:
            wine = found.wine
            vintage = f", {wine.vintage_year}" if wine.vintage_year else ""
            caption = f"{wine.name} — {wine.producer}{vintage}"
            target = args.out / label_filename(found.ref, wine.name)
            target.write_bytes(label_png(links[found.ref], caption))
            console.print(f"{escape(str(target))}  {escape(links[found.ref])}")
    except OSError as exc:
        return fail(f"could not write to {args.out}: {exc.strerror}")
    return 0
