"""Shared fixtures: a real PostgreSQL + pgvector (embedded, or DATABASE_URL), seeded with the shipped catalogue."""

from __future__ import annotations

import functools
import json
import os
import re
import uuid
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[1]
CATALOG_FILE = ROOT / "data" / "catalog" / "wines.json"
SHOP_EXPORT = ROOT / "data" / "catalog" / "shop-export-example.json"

# Keys and endpoints from the developer's shell must not leak into tests.
for _name in (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "EMBEDDING_PROVIDER",
    "EMBEDDING_MODEL",
    "EMBEDDING_API_KEY",
    "EMBEDDING_BASE_URL",
    "TOOL_FUNCTION_NAME",
    "IMAGES_BUCKET",
    "TELEGRAM_BOT_TOKEN",
    "QUEUE_URL",
    "IDEMPOTENCY_TABLE",
    "SOMMELIER_OFFLINE",
    "LLM_MODEL",
    "ADMIN_CHAT_ID",
    "SOMMELIER_HEALTH_WARNING",
    "MESSAGE_RETENTION_DAYS",
    "REPORT_FUNCTION_NAME",
):
    os.environ.pop(_name, None)


# The fixtures that start a local stand-in on a real socket (the fake Bot API, the fake model).
SOCKET_FIXTURES = frozenset({"telegram", "llm", "server"})
# Whole bots over real sockets, with every fake: the end-to-end and hardening suites.
SOCKET_SUITES = frozenset({"e2e", "hardening"})
# A module that starts a stand-in of its own (a fake, or a bare server that never answers).
STARTS_A_SERVER = re.compile(r"\b(?:FakeOpenAI|FakeTelegram|\w*HTTPServer)\(|\bsocket\.socket\(|\.listen\(")


@functools.cache
def _starts_a_server(path: Path) -> bool:
    return path.suffix == ".py" and bool(STARTS_A_SERVER.search(path.read_text("utf-8")))


def pytest_collection_modifyitems(items):
    """Every test that reaches the database server (a fixture of `admin_url`'s, however indirectly) is marked
    `database`; every test that talks over a real socket to a stand-in is marked `sockets`. `make test-fast`
    runs the rest: the service logic on the in-memory ports (tests marked `gate`, the analysers, are left to
    `make lint` and `make test`)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "admin_url" in fixtures:
            item.add_marker(pytest.mark.database)
        suite = item.path.relative_to(ROOT / "tests").parts[0] if item.path.is_relative_to(ROOT / "tests") else ""
        if fixtures & SOCKET_FIXTURES or suite in SOCKET_SUITES or _starts_a_server(item.path):
            item.add_marker(pytest.mark.sockets)


@pytest.fixture(autouse=True)
def _age_gate_off_unless_tested(monkeypatch):
    """The customer age gate is on by default; tests about other things talk to the bot as a confirmed
    adult would, with it off. The gate's own tests (tests/e2e/test_shop_duties.py) switch it back on."""
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")


@pytest.fixture(scope="session")
def state_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sommelier-state")
    os.environ["SOMMELIER_STATE_DIR"] = str(path)
    return path


@pytest.fixture(scope="session")
def admin_url(state_dir):
    """A server URL with rights to create databases: DATABASE_URL, else a fresh embedded server."""
    external = os.environ.pop("DATABASE_URL", None)
    if external:
        yield external
        return
    from sommelier.db.embedded import ensure_embedded_database, stop_embedded_database

    url = ensure_embedded_database(state_dir / "pgdata", database="postgres")
    yield url
    stop_embedded_database(state_dir / "pgdata")


def _database_url(admin_url: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(admin_url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


def _create_database(admin_url: str, name: str, template: str | None = None) -> str:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        suffix = f' TEMPLATE "{template}"' if template else ""
        conn.execute(f'CREATE DATABASE "{name}"{suffix}')
    return _database_url(admin_url, name)


def _drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def empty_template(admin_url):
    """A migrated database with no wines, used as a template."""
    from sommelier.db.migrations import apply_migrations

    name = f"som_empty_{uuid.uuid4().hex[:8]}"
    url = _create_database(admin_url, name)
    apply_migrations(url)
    yield name
    _drop_database(admin_url, name)


@pytest.fixture(scope="session")
def catalog_template(admin_url, state_dir):
    """A migrated database holding the shipped catalogue with local embeddings."""
    from sommelier.catalog.importer import import_catalog
    from sommelier.db.migrations import apply_migrations
    from sommelier.db.pool import Database
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.photos.store import LocalPhotoStore
    from sommelier.repositories.adapters import in_process_repositories

    name = f"som_catalog_{uuid.uuid4().hex[:8]}"
    url = _create_database(admin_url, name)
    apply_migrations(url)
    database = Database(url)
    import_catalog(
        CATALOG_FILE,
        catalog=in_process_repositories(database).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(state_dir / "photos"),
    )
    database.close()  # a template must have no open connections
    yield name
    _drop_database(admin_url, name)


def _clone(admin_url: str, template: str):
    from sommelier.db.pool import Database

    name = f"som_test_{uuid.uuid4().hex[:10]}"
    database = Database(_create_database(admin_url, name, template=template))
    return name, database


def _with_catalogue_replaced(admin_url: str, template: str, catalogue: Path, photos: Path):
    """A private copy of `template` whose catalogue `sommelier catalog import FILE --replace` made exactly
    `catalogue`: the template's wines stay as unavailable rows."""
    from sommelier.catalog.importer import import_catalog
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.photos.store import LocalPhotoStore
    from sommelier.repositories.adapters import in_process_repositories

    name, database = _clone(admin_url, template)
    try:
        import_catalog(
            catalogue,
            catalog=in_process_repositories(database).catalog,
            embedder=LocalHashingEmbeddings(),
            photos=LocalPhotoStore(photos),
            replace=True,
        )
    except BaseException:
        _discard(admin_url, name, database)
        raise
    return name, database


def _discard(admin_url: str, name: str, database) -> None:
    database.close()
    _drop_database(admin_url, name)


@pytest.fixture(scope="module")
def shop_db(admin_url, catalog_template, tmp_path_factory):
    """The shipped catalogue replaced by the shop export: only the shop's 62 wines are for sale. Private to
    a test module (an eval run writes chat history)."""
    name, database = _with_catalogue_replaced(
        admin_url, catalog_template, SHOP_EXPORT, tmp_path_factory.mktemp("shop-photos")
    )
    yield database
    _discard(admin_url, name, database)


@pytest.fixture(scope="session")
def catalog_db(admin_url, catalog_template):
    """The shipped catalogue, shared by read-only tests. Tests must not write to it."""
    name, database = _clone(admin_url, catalog_template)
    yield database
    database.close()
    _drop_database(admin_url, name)


@pytest.fixture
def fresh_db(admin_url, catalog_template):
    """A private copy of the catalogue database for a test that writes."""
    name, database = _clone(admin_url, catalog_template)
    yield database
    database.close()
    _drop_database(admin_url, name)


@pytest.fixture
def empty_db(admin_url, empty_template):
    name, database = _clone(admin_url, empty_template)
    yield database
    database.close()
    _drop_database(admin_url, name)


@pytest.fixture(scope="session")
def shipped_wines() -> list[dict]:
    """The shipped catalogue as plain dicts, for computing expectations independently of SQL."""
    return json.loads(CATALOG_FILE.read_text("utf-8"))["wines"]


def expected_photo_key(photo: Path) -> str:
    """The bucket key the importer gives a photo file (content-addressed), computed independently."""
    import hashlib

    return f"wines/{hashlib.sha256(photo.read_bytes()).hexdigest()[:12]}-{photo.name}"


@pytest.fixture
def telegram():
    """The fake Telegram Bot API on loopback; it records every call."""
    from tests.fakes.telegram_server import FakeTelegram
    from tests.fakes.telegram_updates import TEST_BOT

    with FakeTelegram(bot_username=TEST_BOT) as fake:
        yield fake


@pytest.fixture
def llm():
    """The fake OpenAI-compatible server on loopback, for the real openai SDK."""
    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI() as fake:
        yield fake


# ---------------------------------------------------------------------------- the in-memory store
# The same catalogues in the in-memory ports (sommelier_dev.memory), for the tests of the service logic: no
# database server, so none of these is marked `database`. tests/contract holds both stores to one contract.


@pytest.fixture(scope="session")
def memory_template(state_dir):
    """The shipped catalogue imported into memory once (local embeddings, photos under the state folder)."""
    from sommelier.catalog.importer import import_catalog
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.photos.store import LocalPhotoStore
    from sommelier_dev.memory import MemoryStore, memory_repositories

    store = MemoryStore()
    import_catalog(
        CATALOG_FILE,
        catalog=memory_repositories(store).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(state_dir / "photos"),
    )
    return store


@pytest.fixture(scope="session")
def catalog_memory(memory_template):
    """The shipped catalogue in memory, shared by read-only tests (catalog_db's twin). Tests must not write to it."""
    return memory_template.copy()


@pytest.fixture
def fresh_memory(memory_template):
    """A private copy of the in-memory catalogue for a test that writes (fresh_db's twin)."""
    return memory_template.copy()


@pytest.fixture
def empty_memory():
    from sommelier_dev.memory import MemoryStore

    return MemoryStore()


def memory_with_catalogue_replaced(template, catalogue: Path, photos: Path):
    """A copy of an in-memory store whose catalogue `sommelier catalog import FILE --replace` made exactly
    `catalogue` (_with_catalogue_replaced's twin)."""
    from sommelier.catalog.importer import import_catalog
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.photos.store import LocalPhotoStore
    from sommelier_dev.memory import memory_repositories

    store = template.copy()
    import_catalog(
        catalogue,
        catalog=memory_repositories(store).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(photos),
        replace=True,
    )
    return store


@pytest.fixture(scope="module")
def shop_memory(memory_template, tmp_path_factory):
    """The shipped catalogue replaced by the shop export, in memory (shop_db's twin)."""
    return memory_with_catalogue_replaced(memory_template, SHOP_EXPORT, tmp_path_factory.mktemp("shop-photos"))
