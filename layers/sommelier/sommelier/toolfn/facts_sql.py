"""The shop's facts (domain/shop_facts.py): one row of table shop_facts, written whole by the owner's
import and read by every turn's begin_turn (so a turn still costs three invocations)."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from sommelier.domain.search import ArgumentError, require_object
from sommelier.domain.shop import StoredFacts
from sommelier.domain.shop_facts import ShopFacts, ShopFactsError, facts_json, read_facts


def load_facts(conn: psycopg.Connection) -> ShopFacts | None:
    """The facts kept, or None when the owner set none (a row that no longer reads is none too)."""
    row = conn.execute("SELECT facts FROM shop_facts WHERE id = 1").fetchone()
    if row is None:
        return None
    try:
        return read_facts(row[0])
    except ShopFactsError:
        return None


def get_shop_facts(conn: psycopg.Connection, arguments: Any) -> StoredFacts:
    require_object(arguments if arguments is not None else {})
    return StoredFacts(facts=load_facts(conn))


def put_shop_facts(conn: psycopg.Connection, arguments: Any) -> StoredFacts:
    """Replace the facts whole with validated ones; ``facts`` null removes them."""
    args = require_object(arguments)
    raw = args.get("facts")
    with conn.transaction():
        if raw is None:
            conn.execute("DELETE FROM shop_facts WHERE id = 1")
            return StoredFacts(facts=None)
        try:
            facts = read_facts(raw)
        except ShopFactsError as exc:
            raise ArgumentError(str(exc)) from None
        conn.execute(
            "INSERT INTO shop_facts (id, facts) VALUES (1, %s)"
            " ON CONFLICT (id) DO UPDATE SET facts = EXCLUDED.facts, updated_at = now()",
            (Jsonb(facts_json(facts)),),
        )
    return StoredFacts(facts=facts)
