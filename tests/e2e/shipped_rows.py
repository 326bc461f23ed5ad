"""The oracle's side of a wine card: the shipped catalogue's row a caption names, read from data/catalog/wines.json
by hand (never through the package), for the end-to-end tests that check what the customer was shown."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = json.loads((ROOT / "data" / "catalog" / "wines.json").read_text("utf-8"))["wines"]


def norm(text: str) -> str:
    return " ".join((text or "").replace("\u00a0", " ").lower().replace("ё", "е").split())


def row(caption: str) -> dict:
    """The row whose name the caption's first line holds (the longest, where one name holds another)."""
    head = norm(caption.split("\n", 1)[0])
    named = [w for w in CATALOGUE if norm(w["name"]) in head]
    assert named, caption
    return max(named, key=lambda w: len(w["name"]))
