"""`sommelier dev up` on an empty database: migrations, then the shipped catalogue is seeded."""

from __future__ import annotations

import json

from sommelier.settings import load_settings
from sommelier_dev.cli.context import CliContext
from sommelier_dev.cli.dev_cmd import ensure_ready

from tests.conftest import CATALOG_FILE


def ready():
    """`dev up` as a command started now runs it: the settings of this environment, its own database."""
    context = CliContext(load_settings())
    try:
        return ensure_ready(context, quiet=True)
    finally:
        context.close()


def test_dev_up_seeds_an_empty_database_with_the_shipped_catalogue(empty_db, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", empty_db.conninfo)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path))
    shipped = json.loads(CATALOG_FILE.read_text("utf-8"))["wines"]

    stats = ready()

    assert stats.wines == len(shipped)
    with empty_db.connection() as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM wines").fetchall()}
    assert names == {wine["name"] for wine in shipped}
    assert ready().wines == len(shipped), "a second run seeds nothing more"


def test_dev_up_re_embeds_a_catalogue_of_an_older_local_embedder(fresh_db, monkeypatch, tmp_path):
    """Rows of local-ngram-hash-v2 cannot meet queries of the current local model: `dev up` re-embeds them."""
    from sommelier.settings import LOCAL_MODEL_NAME

    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path))
    old = "[" + ",".join(["1"] + ["0"] * 1535) + "]"
    with fresh_db.connection() as conn:
        before = dict(conn.execute("SELECT id, embedding::text FROM wines WHERE name LIKE 'C%'").fetchall())
        conn.execute(
            "UPDATE wines SET embedding_model = 'local-ngram-hash-v2', embedding = %s::vector WHERE name LIKE 'C%%'",
            (old,),
        )
        total = conn.execute("SELECT count(*) FROM wines").fetchone()[0]
        conn.commit()
    assert 0 < len(before) < total

    stats = ready()

    assert stats.embedding_models == {LOCAL_MODEL_NAME: total}
    with fresh_db.connection() as conn:
        after = dict(conn.execute("SELECT id, embedding::text FROM wines WHERE name LIKE 'C%'").fetchall())
    assert after.keys() == before.keys()
    for wine_id, vector in after.items():  # the import rounds to 7 places, re-embedding does not
        again, first = json.loads(vector), json.loads(before[wine_id])
        assert max(abs(a - b) for a, b in zip(again, first, strict=True)) < 1e-6, "the current model's vector"


def test_dev_up_leaves_another_providers_rows_alone(fresh_db, monkeypatch, tmp_path):
    """Rows of a remote model are not re-embedded by `dev up` (that costs API calls; `doctor` says what to do)."""
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path))
    with fresh_db.connection() as conn:
        moved = conn.execute(
            "UPDATE wines SET embedding_model = 'text-embedding-3-small' WHERE name LIKE 'C%' RETURNING id"
        ).fetchall()
        conn.commit()

    stats = ready()

    assert stats.embedding_models["text-embedding-3-small"] == len(moved) > 0
