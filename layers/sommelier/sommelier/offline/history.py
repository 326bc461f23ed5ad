"""The chat history as the offline responder replays it: each customer message with the wines shown for it
and the bot's answer as saved; wine ids kept only as canonical UUIDs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from sommelier.domain.conversation import ChatMessage
from sommelier.offline.intent import QueryIntent


def valid_ids(values: object) -> list[str]:
    """Wine ids as canonical UUID strings; anything else is dropped (the tools would reject the whole call)."""
    ids: list[str] = []
    for value in values if isinstance(values, (list, tuple)) else []:
        try:
            ids.append(str(uuid.UUID(str(value))))
        except ValueError:
            continue
    return list(dict.fromkeys(ids))


@dataclass
class Exchange:
    """One customer message, the wines shown for it and the bot's answer to it."""

    user: str
    wine_ids: list[str] = field(default_factory=list)
    answer: str = ""  # the bot's answer to it, as saved


def exchanges(history: list[ChatMessage]) -> list[Exchange]:
    """The history as exchanges, in order: an answer joins the customer message before it."""
    pairs: list[Exchange] = []
    for message in history:
        if message.role == "user":
            pairs.append(Exchange(message.content or ""))
        elif message.role == "assistant" and pairs:
            pairs[-1].wine_ids = [*pairs[-1].wine_ids, *valid_ids(message.wine_ids)]
            pairs[-1].answer = message.content or ""
    return pairs


MAX_EXCLUDED = 200


def excluded(exclude_ids: list[str], chain: list[str], intent: QueryIntent) -> list[str]:
    """The wines a search leaves out. Only "ещё"/"другие варианты" hides what the chain showed; a narrowing
    follow-up ("а сухое белое?") may well land on a wine from the previous answer."""
    return list(dict.fromkeys([*exclude_ids, *(chain if intent.more else [])]))[-MAX_EXCLUDED:]
