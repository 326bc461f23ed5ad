"""Telegram: a small Bot API client, idempotent delivery, and the answer renderer's names (home: bot.render) (docs/architecture.md).

The names below are loaded on first use: the webhook imports `sommelier.edge.ingress` and must
not pay for the Bot API client (httpx2) or the renderer at its cold start.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "sommelier.telegram.client": (
        "BadRequest",
        "Forbidden",
        "Message",
        "NetworkError",
        "RetryAfter",
        "ServerError",
        "TelegramClient",
        "TelegramError",
        "WebhookInfo",
    ),
    "sommelier.telegram.delivery": (
        "DeliveryLog",
        "DeliveryResult",
        "DynamoDeliveryLog",
        "InMemoryDeliveryLog",
        "Sender",
    ),
    "sommelier.telegram.render": (
        "Outgoing",
        "feedback_keyboard",
        "parse_callback_data",
        "price_label",
        "render_answer",
        "render_text",
    ),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
