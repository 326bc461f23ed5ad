"""The normalised columns of a wine, computed from its text by the language layer at import
(and for older rows, or after the vocabulary changes, by `backfill` right after the migrations)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from sommelier import language


def normalised_columns(country: str, grape_varieties: Sequence[str], food_pairings: Sequence[str]) -> dict[str, Any]:
    """country_code, grape names without shares and the shares, grape_keys, food_categories."""
    names: list[str] = []
    shares: list[float | None] = []
    for entry in grape_varieties:
        name, share = language.parse_grape(entry)
        if name and name not in names:
            names.append(name)
            shares.append(share)
    known = language.country(country, fuzzy=False)
    categories: set[str] = set()
    for pairing in food_pairings:
        categories |= language.food_categories(pairing)
    return {
        "country_code": known.code if known else None,
        "grape_varieties": names,
        "grape_shares": shares if any(s is not None for s in shares) else [],
        "grape_keys": sorted({language.grape_key(n) for n in names}),
        "food_categories": sorted(categories),
        "lexicon_version": language.version(),
    }


def backfill(conn: psycopg.Connection, batch: int = 500) -> int:
    """Recompute the normalised columns of rows written with another vocabulary version. Returns the count."""
    current = language.version()
    done = 0
    while True:
        with conn.transaction():
            rows = conn.execute(
                "SELECT id, country, grape_varieties, food_pairings FROM wines"
                " WHERE lexicon_version IS DISTINCT FROM %s LIMIT %s FOR UPDATE SKIP LOCKED",
                (current, batch),
            ).fetchall()
            for wine_id, country, grapes, pairings in rows:
                columns = normalised_columns(country, grapes, pairings)
                # Keep shares already stored when the names carried none (an older import parsed them).
                conn.execute(
                    "UPDATE wines SET country_code = %(country_code)s, grape_varieties = %(grape_varieties)s,"
                    " grape_shares = CASE WHEN cardinality(%(grape_shares)s::numeric[]) > 0"
                    "   THEN %(grape_shares)s::numeric[] ELSE grape_shares END,"
                    " grape_keys = %(grape_keys)s, food_categories = %(food_categories)s,"
                    " lexicon_version = %(lexicon_version)s WHERE id = %(id)s",
                    {**columns, "id": wine_id},
                )
        done += len(rows)
        if len(rows) < batch:
            return done
