"""A pooled connection that the server closed (idle_session_timeout, so Aurora can pause) is
replaced before use instead of failing the next tool call."""

from __future__ import annotations

import psycopg


def test_a_connection_closed_by_the_server_is_replaced_before_use(catalog_db):
    pool = catalog_db.pool
    with pool.connection() as conn:
        victim = conn.info.backend_pid
    with psycopg.connect(catalog_db.conninfo, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (victim,))
    with pool.connection() as conn:
        assert conn.execute("SELECT count(*) FROM wines").fetchone()[0] == 64
        assert conn.info.backend_pid != victim
