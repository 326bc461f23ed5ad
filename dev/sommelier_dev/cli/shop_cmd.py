"""`sommelier shop import FILE` and `sommelier shop export`: the shop's own facts (docs/shop.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sommelier.domain.shop_facts import ShopFactsError, facts_json

from sommelier_dev.cli.output import console, fail
from sommelier_dev.shop_file import parse_shop_file


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("shop", help="the shop's facts: stores, hours, pickup, payment, promotions")
    commands = parser.add_subparsers(dest="shop_command", required=True)
    importing = commands.add_parser("import", help="keep the facts of a shop file (JSON or YAML), all or nothing")
    importing.add_argument("file", type=Path)
    importing.set_defaults(run=run_import)
    exporting = commands.add_parser("export", help="print the facts kept, as JSON (an import reads it back)")
    exporting.add_argument("--out", type=Path, help="write to this file instead of stdout")
    exporting.set_defaults(run=run_export)
    clearing = commands.add_parser("clear", help="remove the shop's facts (the bot then says it does not know)")
    clearing.set_defaults(run=run_clear)


def run_import(args: argparse.Namespace) -> int:
    path: Path = args.file
    try:
        data = path.read_bytes()
    except OSError as exc:
        return fail(f"Не удалось прочитать {path}: {exc.strerror or exc}")
    try:
        facts = parse_shop_file(path.name, data)
    except ShopFactsError as exc:
        return fail(str(exc))
    try:
        kept = args.context.repositories().shop.put_shop_facts(facts)
    except Exception as exc:  # a port error or an unreachable database: one clear line
        return fail(f"Факты магазина не сохранены: {exc}")
    assert kept is not None
    stores = ", ".join(s.name for s in kept.stores) or "магазинов не указано"
    reservations = "включено" if kept.reservations else "выключено"
    console.print(f"Сохранено: «{kept.name}» — {stores}; бронирование {reservations}; акций: {len(kept.promotions)}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    try:
        facts = args.context.repositories().shop.shop_facts()
    except Exception as exc:
        return fail(f"Факты магазина не прочитаны: {exc}")
    if facts is None:
        return fail("Факты магазина не заданы: sommelier shop import FILE")
    text = json.dumps(facts_json(facts), ensure_ascii=False, indent=2) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        console.print(f"Записано в {args.out}")
    else:
        print(text, end="")
    return 0


def run_clear(args: argparse.Namespace) -> int:
    try:
        args.context.repositories().shop.put_shop_facts(None)
    except Exception as exc:
        return fail(f"Факты магазина не удалены: {exc}")
    console.print("Факты магазина удалены")
    return 0
