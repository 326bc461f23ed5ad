"""Versioned SQL migrations: `migrations/NNNN_name.sql`, applied in order, each once."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg

# Serialises concurrent runners (two deploys, or a test and `dev up`).
_ADVISORY_LOCK_KEY = 727_001


@dataclass(frozen=True)
class Migration:
    version: str
    name: str
    sql: str


def available_migrations() -> list[Migration]:
    folder = resources.files("sommelier.db") / "migrations"
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            version, _, rest = entry.name.partition("_")
            found.append(Migration(version=version, name=rest.removesuffix(".sql"), sql=entry.read_text("utf-8")))
    return sorted(found, key=lambda m: m.version)


def applied_versions(conn: psycopg.Connection) -> set[str]:
    exists = conn.execute("SELECT to_regclass('public.schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return set()
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def pending_migrations(conn: psycopg.Connection) -> list[Migration]:
    done = applied_versions(conn)
    return [m for m in available_migrations() if m.version not in done]


def _seconds_ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def apply_migrations(
    conninfo: str,
    *,
    connect_timeout_s: float | None = None,
    lock_timeout_s: float | None = None,
    statement_timeout_s: float | None = None,
) -> list[str]:
    """Apply every pending migration, each in its own transaction. Returns the versions applied.

    With timeouts (the deploy-time custom resource passes its budget), a database that never answers
    fails the connect, and a migration lock held elsewhere (or any lock a migration waits on) fails
    with LockNotAvailable instead of waiting past the caller's deadline. Without them: wait (dev, tests).
    """
    applied: list[str] = []
    options: dict[str, Any] = {"connect_timeout": max(2, int(connect_timeout_s))} if connect_timeout_s else {}
    with psycopg.connect(conninfo, autocommit=True, **options) as conn:
        # lock_timeout bounds pg_advisory_lock too; statement_timeout bounds a migration that runs too long.
        for setting, seconds in (("lock_timeout", lock_timeout_s), ("statement_timeout", statement_timeout_s)):
            if seconds is not None:
                conn.execute("SELECT set_config(%s, %s, false)", (setting, f"{_seconds_ms(seconds)}ms"))
        conn.execute("SELECT pg_advisory_lock(%s)", (_ADVISORY_LOCK_KEY,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version text PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for migration in pending_migrations(conn):
                with conn.transaction():
                    conn.execute(migration.sql)
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                        (migration.version, migration.name),
                    )
                applied.append(migration.version)
            if "0004" in applied_versions(conn):
                backfill_normalised_columns(conn)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_ADVISORY_LOCK_KEY,))
    return applied


def backfill_normalised_columns(conn: psycopg.Connection, batch: int = 500) -> int:
    """Recompute the normalised columns of rows written with another vocabulary version. Returns the count."""
    # A data step in Python: the columns come from the language layer (loaded only when this step runs).
    from sommelier import language
    from sommelier.language import matching

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
                columns = matching.normalised_columns(country, grapes, pairings)
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
