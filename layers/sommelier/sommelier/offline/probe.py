"""Which single constraint keeps a request empty (the closing offer of an answer that found nothing): a few
one-wine searches, each without one condition, price first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sommelier.domain.wine import Wine

PROBE_ORDER = ("price", "sweetness", "grape_variety", "country", "region", "food_pairing", "wine_type")
MAX_PROBES = 3


def probe(
    search: Callable[[dict[str, Any]], list[Wine]], filters: dict[str, Any], exclude: list[str]
) -> tuple[str | None, float | None]:
    """Which single constraint keeps the request empty? Up to MAX_PROBES one-wine searches, price first.

    Without price_max, a positive price_min makes search_wines list the cheapest first, so the
    probe also finds the nearest price; with only price_max it lists the most expensive first.
    """
    probes = 0
    for key in PROBE_ORDER:
        if probes >= MAX_PROBES:
            break
        if key == "price":
            if filters.get("price_max") is not None:
                loose = {k: v for k, v in filters.items() if k not in ("price_max", "price_min")}
                loose["price_min"] = max(float(filters["price_max"]), 1.0)
                blocker = "price_max"
            elif filters.get("price_min") is not None:
                loose = {k: v for k, v in filters.items() if k != "price_min"}
                loose["price_max"] = float(filters["price_min"])
                blocker = "price_min"
            else:
                continue
        elif filters.get(key):
            loose = {k: v for k, v in filters.items() if k != key}
            blocker = key
        else:
            continue
        probes += 1
        arguments: dict[str, Any] = {**loose, "limit": 1}
        if exclude:
            arguments["exclude_ids"] = exclude
        wines = search(arguments)
        if wines:
            nearest = float(wines[0].price_rub) if key == "price" else None
            return blocker, nearest
    return None, None
