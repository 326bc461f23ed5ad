"""`sommelier dev up` on an empty database: migrations, then the shipped catalogue is seeded."""

from __future__ import annotations

import json

from sommelier.cli.dev_cmd import ensure_ready

from tests.conftest import CATALOG_FILE


def test_dev_up_seeds_an_empty_database_with_the_shipped_catalogue(empty_db, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", empty_db.conninfo)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path))
    shipped = json.loads(CATALOG_FILE.read_text("utf-8"))["wines"]

    stats = ensure_ready(quiet=True)

    assert stats["wines"] == len(shipped)
    with empty_db.connection() as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM wines").fetchall()}
    assert names == {wine["name"] for wine in shipped}
    assert ensure_ready(quiet=True)["wines"] == len(shipped), "a second run seeds nothing more"
