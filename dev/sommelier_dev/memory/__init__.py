"""The data ports in memory: one implementation of each (catalogue, chat, shop) on a `MemoryStore`, held to
the same contract tests as the PostgreSQL adapters (tests/contract).

They are what the tests of the service logic run on (the agent, the offline responder, Telegram routing, the
shop's duties), so that those need no database server. The dev package holds them: no deployed function runs
on them, and the layer ships only what a handler reaches (tests/unit/test_layer_contents.py).
"""

from __future__ import annotations

from sommelier.repositories.adapters import Repositories
from sommelier.repositories.ports import InvocationCounter

from sommelier_dev.memory.catalog import MemoryCatalog
from sommelier_dev.memory.chat import MemoryChat
from sommelier_dev.memory.shop import MemoryShop
from sommelier_dev.memory.store import Clock, MemoryStore

__all__ = ["Clock", "MemoryCatalog", "MemoryChat", "MemoryShop", "MemoryStore", "memory_repositories"]


def memory_repositories(store: MemoryStore | None = None) -> Repositories:
    """The three ports on one store (a new, empty one when not given), sharing one invocation counter."""
    store = store if store is not None else MemoryStore()
    counter = InvocationCounter()
    return Repositories(MemoryCatalog(store, counter), MemoryChat(store, counter), MemoryShop(store, counter), counter)
