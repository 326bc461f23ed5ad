"""Telegram: a small Bot API client, answer rendering, and idempotent delivery (DESIGN §10)."""

from sommelier.telegram.client import (
    BadRequest,
    Forbidden,
    Message,
    NetworkError,
    RetryAfter,
    ServerError,
    TelegramClient,
    TelegramError,
    WebhookInfo,
)
from sommelier.telegram.delivery import DeliveryLog, DeliveryResult, DynamoDeliveryLog, InMemoryDeliveryLog, Sender
from sommelier.telegram.render import (
    Outgoing,
    feedback_keyboard,
    parse_callback_data,
    price_label,
    render_answer,
    render_text,
)

__all__ = [
    "BadRequest",
    "DeliveryLog",
    "DeliveryResult",
    "DynamoDeliveryLog",
    "Forbidden",
    "InMemoryDeliveryLog",
    "Message",
    "NetworkError",
    "Outgoing",
    "RetryAfter",
    "Sender",
    "ServerError",
    "TelegramClient",
    "TelegramError",
    "WebhookInfo",
    "feedback_keyboard",
    "parse_callback_data",
    "price_label",
    "render_answer",
    "render_text",
]
