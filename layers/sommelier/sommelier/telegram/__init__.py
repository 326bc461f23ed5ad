"""Telegram: the Bot API client and models, update parsing, routing, rendering and delivery (docs/architecture.md)."""
