"""A wine as the owner names it on the command line: the shop's article as written in its file (Cyrillic,
spaces and all), the short id `catalog list` shows (the first characters of the wine's id), or the id."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sommelier.domain.catalog import ExportedWine

MIN_SHORT_ID = 6
_HEX = re.compile(r"[0-9a-f-]+")


def short_id(wine_id: str) -> str:
    """The id `catalog list` shows."""
    return wine_id[:8]


def resolve_refs(asked: Sequence[str], wines: Sequence[ExportedWine]) -> dict[str, str]:
    """Each ref as asked → the sku or id the shop store finds it by; a ref that names no wine is kept as asked
    (the store then lists it as missing). ValueError (in Russian) for a short id that fits several wines."""
    by_sku = {w.sku: w for w in wines if w.sku}
    by_folded: dict[str, list[ExportedWine]] = {}
    for wine in by_sku.values():
        by_folded.setdefault(" ".join(str(wine.sku).split()).casefold(), []).append(wine)
    ids = {w.id for w in wines}
    resolved: dict[str, str] = {}
    for ref in (r.strip() for r in asked):
        if not ref:
            continue
        if ref in by_sku or ref in ids:
            resolved[ref] = ref
            continue
        folded = by_folded.get(" ".join(ref.split()).casefold(), [])
        if len(folded) == 1:  # «вл-0101» for «ВЛ-0101»: the one article it can be
            resolved[ref] = str(folded[0].sku)
            continue
        resolved[ref] = _by_short_id(ref, wines) or ref
    return resolved


def _by_short_id(ref: str, wines: Sequence[ExportedWine]) -> str | None:
    prefix = ref.lower()
    if len(prefix.replace("-", "")) < MIN_SHORT_ID or not _HEX.fullmatch(prefix):
        return None
    matches = [w.id for w in wines if w.id.startswith(prefix)]
    if len(matches) > 1:
        raise ValueError(f"короткий id «{ref}» подходит к нескольким винам ({len(matches)}): укажите больше знаков")
    return matches[0] if matches else None
