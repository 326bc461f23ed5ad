"""`sommelier qr SKU... --out DIR`: printable shelf labels, a QR code of each wine's deep link with its name."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from sommelier.settings import TelegramSettings

from sommelier_dev.cli.output import console, fail


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("qr", help="напечатать PNG-метки с QR-кодом, который открывает карточку вина в боте")
    parser.add_argument(
        "refs",
        nargs="+",
        metavar="SKU",
        help="артикулы вин как в файле магазина (кириллица тоже), короткие id из `catalog list` или id вин",
    )
    parser.add_argument("--out", type=Path, required=True, help="папка для PNG-файлов (создаётся, если её нет)")
    parser.add_argument("--bot", help="@имя бота (по умолчанию TELEGRAM_BOT_USERNAME или getMe по токену)")
    parser.set_defaults(run=run)


def _bot_username(explicit: str | None, settings: TelegramSettings) -> str:
    from sommelier.telegram.client import TelegramClient

    name = explicit or settings.bot_username
    if name:
        return name.lstrip("@")
    if not settings.bot_token:
        raise ValueError("имя бота неизвестно: укажите --bot @имя или задайте TELEGRAM_BOT_USERNAME")
    with TelegramClient.from_settings(settings) as client:
        username = client.get_me().username
    if not username:
        raise ValueError("getMe не вернул имя бота: укажите --bot @имя")
    return username


def run(args: argparse.Namespace) -> int:
    from sommelier.domain.errors import PortError
    from sommelier.shop.deeplinks import DeepLinkError, wine_link

    from sommelier_dev.cli.wine_refs import resolve_refs
    from sommelier_dev.qr import label_filename, label_png

    try:
        bot = _bot_username(args.bot, args.context.settings.telegram)
        wine_link(bot, "w")  # a bad bot name fails before anything is read or written
        repositories = args.context.repositories()
        every = repositories.catalog.export_wines(include_unavailable=True)
        refs = resolve_refs(args.refs, every)
        skus = {w.id: w.sku for w in every if w.sku}
        result = repositories.shop.find_wines(list(refs.values()))
    except PortError as exc:
        return fail(f"каталог не прочитан: {exc}")
    except (DeepLinkError, ValueError) as exc:
        return fail(str(exc))
    except Exception as exc:
        return fail(f"метки не напечатаны: {exc}")
    if result.missing:
        unknown = [ref for ref, found in refs.items() if found in result.missing]
        return fail("нет в каталоге: " + ", ".join(unknown) + " (файлы не записаны)")
    from sommelier.language.name_line import name_line

    by_ref = {found.ref: found.wine for found in result.wines}
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        for asked, ref in refs.items():
            wine = by_ref[ref]
            try:
                link = wine_link(bot, skus.get(wine.id) or wine.id)
            except DeepLinkError:  # an article too long for a link: the label links the wine by its id
                link = wine_link(bot, wine.id)
            vintage = f", {wine.vintage_year}" if wine.vintage_year else ""
            caption = f"{name_line(wine.name, wine.producer, wine.vintage_year)} — {wine.producer}{vintage}".replace(
                " — ,", " —"
            ).rstrip(" —")
            target = args.out / label_filename(asked, wine.name)
            target.write_bytes(label_png(link, caption))
            console.print(f"{escape(str(target))}  {escape(link)}")
    except OSError as exc:
        return fail(f"не удалось записать в {args.out}: {exc.strerror}")
    return 0
