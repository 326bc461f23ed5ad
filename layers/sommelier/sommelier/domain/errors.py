"""Failures at the data ports: a small hierarchy instead of in-band {"error": ...} dicts.

The tool function still answers JSON (its wire format); the adapters turn that JSON back into these.
"""

from __future__ import annotations

from typing import Any


class PortError(Exception):
    """A data operation failed; the message is safe to show to the caller (never to a Telegram user)."""

    retryable = False

    def as_payload(self) -> dict[str, Any]:
        """This failure in the tool function's wire format."""
        return {"error": str(self)}


class InvalidArgument(PortError, ValueError):
    """The arguments can't be used; the caller (or the model) can correct them."""


class ArgumentError(InvalidArgument):
    """The arguments can't be used; the message is shown to the caller as {"error": ...}."""


class NotFound(PortError):
    """The operation or the thing asked for does not exist."""

    def as_payload(self) -> dict[str, Any]:
        return {"error": str(self), "not_found": True}


class Unavailable(PortError):
    """The database or the tool function can't be reached now; the same call may work later."""

    retryable = True

    def as_payload(self) -> dict[str, Any]:
        return {"error": str(self), "retryable": True}


class ModelMismatchError(ValueError):
    """A query vector and stored vectors come from different models: they are not comparable."""


def error_from_payload(payload: dict[str, Any]) -> PortError:
    """The exception a {"error": ...} answer of the tool function stands for."""
    message = str(payload.get("error"))
    if payload.get("retryable"):
        return Unavailable(message)
    if payload.get("not_found"):
        return NotFound(message)
    if payload.get("internal"):
        return PortError(message)
    return InvalidArgument(message)
