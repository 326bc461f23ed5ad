"""The offline responder (docs/architecture.md): rule-based reading, the same tools, its own Russian wording.

Used when the LLM fails, and for the whole bot when no API key is configured. The names below load with
their module on first use: the weekly report reads questions with the reader alone and must not pay for
the responder, its guards and the answer's models at a cold start.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sommelier.offline.reader import QueryIntent, read_query
    from sommelier.offline.responder import OfflineAnswer, OfflineResponder

_HOMES = {
    "QueryIntent": "sommelier.offline.reader",
    "read_query": "sommelier.offline.reader",
    "OfflineAnswer": "sommelier.offline.responder",
    "OfflineResponder": "sommelier.offline.responder",
}

__all__ = ["OfflineAnswer", "OfflineResponder", "QueryIntent", "read_query"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)
