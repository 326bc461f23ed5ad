"""One lazily opened psycopg connection pool per process, with the pgvector adapter registered."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from sommelier.settings import env_int

_lock = threading.Lock()
_pools: dict[str, ConnectionPool] = {}


def _configure(conn: psycopg.Connection) -> None:
    register_vector(conn)
    # A stuck query must not eat the whole Lambda timeout.
    conn.execute(
        "SELECT set_config('statement_timeout', %s, false)", (f"{env_int('DATABASE_STATEMENT_TIMEOUT_MS', 5000)}ms",)
    )
    conn.commit()


def get_pool(conninfo: str) -> ConnectionPool:
    with _lock:
        pool = _pools.get(conninfo)
        if pool is None:
            pool = ConnectionPool(
                conninfo,
                # No idle floor: open connections keep Aurora Serverless from pausing.
                min_size=0,
                max_idle=env_int("DATABASE_MAX_IDLE_S", 60),
                max_size=env_int("DATABASE_POOL_SIZE", 4),
                configure=_configure,
                # The server closes sessions idle for 5 minutes (idle_session_timeout, so Aurora can
                # pause) while a frozen Lambda keeps them pooled: test each one before handing it out.
                check=ConnectionPool.check_connection,
                # Aurora needs ~15 s to resume from a pause (the template raises this to 50 s).
                timeout=env_int("DATABASE_CONNECT_TIMEOUT_S", 20),
                kwargs={"connect_timeout": env_int("DATABASE_CONNECT_TIMEOUT_S", 20)},
                open=True,
                name="sommelier",
            )
            _pools[conninfo] = pool
        return pool


def close_pools() -> None:
    with _lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()


class Database:
    """The database port: a pool plus the URL it came from."""

    def __init__(self, conninfo: str):
        self.conninfo = conninfo
        self.pool = get_pool(conninfo)

    def close(self) -> None:
        with _lock:
            pool = _pools.pop(self.conninfo, None)
        if pool is not None:
            pool.close()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        with self.pool.connection() as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        with self.pool.connection() as conn, conn.transaction():
            yield conn


_default: Database | None = None


def default_database() -> Database:
    """The process-wide database, resolved from the environment on first use."""
    global _default
    if _default is None:
        from sommelier.db.url import resolve_database_url

        _default = Database(resolve_database_url())
    return _default


def reset_default_database() -> None:
    global _default
    _default = None


def refresh_default_database() -> bool:
    """After a connection failure: read the database secret again, bypassing its cache, and switch to
    a new pool if the URL changed (a new password). True when it did. Only for a secret-configured
    database: a DATABASE_URL or the embedded server can't change under us."""
    global _default
    from sommelier.settings import env

    if env("DATABASE_URL") or not env("DATABASE_SECRET_ARN") or _default is None:
        return False
    from sommelier.db.url import resolve_database_url

    url = resolve_database_url(fresh=True)
    if url == _default.conninfo:
        return False
    stale, _default = _default, Database(url)
    stale.close()
    return True
