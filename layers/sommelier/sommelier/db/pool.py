"""The database port: one psycopg connection pool, with the pgvector adapter registered.

Each entry point builds its `Database` from the settings (`Database.from_settings`) and passes it down;
tests build their own. A database reached through its Secrets Manager secret re-reads the secret after a
connection failure and switches to a new pool when the password changed (a rotation).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from sommelier.settings import DatabaseSettings, Settings

logger = logging.getLogger(__name__)

Row = TypeVar("Row")


class Database:
    """A pool plus the URL it came from. ``refresh_url`` (a secret-configured database) reads the URL
    again, bypassing the secret's cache."""

    def __init__(
        self,
        conninfo: str,
        settings: DatabaseSettings | None = None,
        *,
        refresh_url: Callable[[], str] | None = None,
    ):
        self.conninfo = conninfo
        self.settings = settings or DatabaseSettings()
        self._refresh_url = refresh_url
        self._lock = threading.Lock()
        self.pool = self._open(conninfo)

    @classmethod
    def from_settings(cls, settings: Settings) -> Database:
        from sommelier.db.url import resolve_database_url

        refresh = None
        if not settings.database.url and settings.database.secret_arn:
            refresh = lambda: resolve_database_url(settings, fresh=True)  # noqa: E731 - a one-line closure
        return cls(resolve_database_url(settings), settings.database, refresh_url=refresh)

    def _open(self, conninfo: str) -> ConnectionPool:
        timeout_ms = self.settings.statement_timeout_ms

        def configure(conn: psycopg.Connection) -> None:
            register_vector(conn)
            # A stuck query must not eat the whole Lambda timeout.
            conn.execute("SELECT set_config('statement_timeout', %s, false)", (f"{timeout_ms}ms",))
            conn.commit()

        return ConnectionPool(
            conninfo,
            # No idle floor: open connections keep Aurora Serverless from pausing.
            min_size=0,
            max_idle=self.settings.max_idle_s,
            max_size=self.settings.pool_size,
            configure=configure,
            # The server closes sessions idle for 5 minutes (idle_session_timeout, so Aurora can
            # pause) while a frozen Lambda keeps them pooled: test each one before handing it out.
            check=ConnectionPool.check_connection,
            # Aurora needs ~15 s to resume from a pause (the template raises this to 50 s).
            timeout=self.settings.connect_timeout_s,
            kwargs={"connect_timeout": self.settings.connect_timeout_s},
            open=True,
            name="sommelier",
        )

    def close(self) -> None:
        self.pool.close()

    def refresh(self) -> bool:
        """After a connection failure: read the database secret again and switch to a new pool if the URL
        changed (a new password). True when it did. A DATABASE_URL or the embedded server can't change."""
        if self._refresh_url is None:
            return False
        url = self._refresh_url()
        with self._lock:
            if url == self.conninfo:
                return False
            stale, self.pool, self.conninfo = self.pool, self._open(url), url
        stale.close()
        return True

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        with self.pool.connection() as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        with self.pool.connection() as conn, conn.transaction():
            yield conn


def first_row(cursor: psycopg.Cursor[Row]) -> Row:
    """The first row of a query that always answers one (a count, an aggregate, RETURNING): psycopg's
    fetchone is Optional even then."""
    row = cursor.fetchone()
    if row is None:
        raise psycopg.DataError("the query answered no row")
    return row
