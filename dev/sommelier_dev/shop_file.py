"""The owner's shop file (docs/shop.md) read from its bytes, for `sommelier shop import`: JSON, or the same as YAML. A file that cannot
be read or does not validate raises ShopFactsError, a Russian message naming each bad field."""

from __future__ import annotations

import json

from sommelier.domain.shop_facts import ShopFacts, ShopFactsError, read_facts

MAX_BYTES = 1_000_000


def parse_shop_file(name: str, data: bytes) -> ShopFacts:
    if len(data) > MAX_BYTES:
        raise ShopFactsError([f"файл больше {MAX_BYTES // 1000} КБ — это не похоже на файл магазина"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ShopFactsError(["файл не в кодировке UTF-8 (сохраните его как UTF-8)"]) from None
    if name.lower().endswith((".yaml", ".yml")):
        return read_facts(_yaml(text))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ShopFactsError([f"это не JSON: строка {exc.lineno}, позиция {exc.colno}"]) from None
    return read_facts(value)


def _yaml(text: str) -> object:
    try:
        import yaml  # type: ignore[import-untyped]  # PyYAML ships no types; its stubs are not installed
    except ImportError:  # pragma: no cover - PyYAML is installed with the package
        raise ShopFactsError(["YAML здесь не читается: сохраните файл как JSON"]) from None
    try:
        return yaml.safe_load(text)  # a date YAML reads as a date, which the facts take as JSON's text
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f": строка {mark.line + 1}, позиция {mark.column + 1}" if mark is not None else ""
        raise ShopFactsError([f"это не YAML{where}"]) from None
