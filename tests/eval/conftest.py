"""A private copy of the shipped catalogue per eval test module (an eval run writes chat history)."""

from __future__ import annotations

import uuid

import psycopg
import pytest


@pytest.fixture(scope="module")
def eval_db(admin_url, catalog_template):
    from sommelier.db.pool import Database

    name = f"som_eval_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{catalog_template}"')
    info = psycopg.conninfo.conninfo_to_dict(admin_url)
    info["dbname"] = name
    database = Database(psycopg.conninfo.make_conninfo(**info))
    yield database
    database.close()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
