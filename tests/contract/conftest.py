"""The contract of the data ports, one test module per port, each test run against both stores: the
in-process PostgreSQL adapters (`[postgres]`, marked `database`) and the in-memory ports (`[memory]`).

A test here says what every implementation of a port must do; what it does not fix (how PostgreSQL ranks the
wines a name or a word matches) is left open on purpose. `Backend` gives a test the ports and the one thing a
test needs beyond them: moving a table's timestamps back (the SQL tests write them; the memory store's are
rows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
from sommelier.repositories.adapters import Repositories, in_process_repositories

STORES = [pytest.param("postgres", marks=pytest.mark.database), "memory"]
TABLES = ("messages", "feedback", "turn_stats")


@dataclass
class Backend:
    name: str
    repositories: Repositories
    backdate: Callable[[str, timedelta], None]  # every row of a table (TABLES) made older by this much

    @property
    def catalog(self):
        return self.repositories.catalog

    @property
    def chat(self):
        return self.repositories.chat

    @property
    def shop(self):
        return self.repositories.shop


def _postgres(database) -> Backend:
    def backdate(table: str, delta: timedelta) -> None:
        assert table in TABLES
        with database.connection() as conn:
            conn.execute(f"UPDATE {table} SET created_at = created_at - %s", (delta,))  # nosec B608 - a listed table

    return Backend("postgres", in_process_repositories(database), backdate)


def _memory(store) -> Backend:
    from sommelier_dev.memory import memory_repositories

    def backdate(table: str, delta: timedelta) -> None:
        assert table in TABLES
        for row in getattr(store, table).values():
            row.created_at -= delta

    return Backend("memory", memory_repositories(store), backdate)


@pytest.fixture(params=STORES)
def backend(request) -> Backend:
    """A private copy of the shipped catalogue, in either store: for a test that writes."""
    if request.param == "postgres":
        return _postgres(request.getfixturevalue("fresh_db"))
    return _memory(request.getfixturevalue("fresh_memory"))


@pytest.fixture(params=STORES)
def catalogue(request) -> Backend:
    """The shipped catalogue shared by read-only tests, in either store."""
    if request.param == "postgres":
        return _postgres(request.getfixturevalue("catalog_db"))
    return _memory(request.getfixturevalue("catalog_memory"))


@pytest.fixture(params=STORES)
def empty(request) -> Backend:
    """A store with no wines, in either store."""
    if request.param == "postgres":
        return _postgres(request.getfixturevalue("empty_db"))
    return _memory(request.getfixturevalue("empty_memory"))
