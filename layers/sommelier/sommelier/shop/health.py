"""The health warning under every answer that recommends wine."""

from __future__ import annotations

import os

DEFAULT_HEALTH_WARNING = "Чрезмерное употребление алкоголя вредит вашему здоровью"


def health_warning() -> str | None:
    """SOMMELIER_HEALTH_WARNING: unset → the default line; set → that text; set but empty → no line.

    Read straight from os.environ because config.env treats an empty value as unset, and here
    "empty" is the documented way to switch the line off.
    """
    raw = os.environ.get("SOMMELIER_HEALTH_WARNING")
    if raw is None:
        return DEFAULT_HEALTH_WARNING
    text = " ".join(raw.split())
    return text or None
