"""Private databases per eval test module (an eval run writes chat history): a copy of the shipped
catalogue, and one whose catalogue was replaced by the shop export."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest

SHOP_EXPORT = Path(__file__).resolve().parents[2] / "data" / "catalog" / "shop-export-example.json"


def _private_copy(admin_url: str, template: str):
    from sommelier.db.pool import Database

    name = f"som_eval_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    info = psycopg.conninfo.conninfo_to_dict(admin_url)
    info["dbname"] = name
    return name, Database(psycopg.conninfo.make_conninfo(**info))


def _drop(admin_url: str, name: str, database) -> None:
    database.close()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def eval_db(admin_url, catalog_template):
    name, database = _private_copy(admin_url, catalog_template)
    yield database
    _drop(admin_url, name, database)


@pytest.fixture(scope="module")
def shop_eval_db(admin_url, catalog_template, tmp_path_factory):
    """The shipped catalogue replaced by the shop export, as `sommelier catalog import FILE --replace` does:
    the shipped wines stay as unavailable rows, and only the shop's 62 are for sale."""
    from sommelier.catalog.importer import import_catalog
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.repositories.adapters import in_process_repositories
    from sommelier.storage.photos import LocalPhotoStore

    name, database = _private_copy(admin_url, catalog_template)
    import_catalog(
        SHOP_EXPORT,
        catalog=in_process_repositories(database).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(tmp_path_factory.mktemp("shop-photos")),
        replace=True,
    )
    yield database
    _drop(admin_url, name, database)
