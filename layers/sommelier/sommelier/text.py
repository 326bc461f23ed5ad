"""Text helpers shared across the package. Normalisation and stemming are the language layer's
(sommelier.language: Snowball's Russian stemmer); this module adds what SQL needs."""

from __future__ import annotations

from sommelier.language import normalize, stem, stems, words

__all__ = ["escape_like", "normalize", "stem", "stems", "words"]


def escape_like(value: str) -> str:
    """Escape LIKE wildcards so user text matches literally (with the default backslash escape)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
