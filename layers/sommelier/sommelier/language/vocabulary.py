"""The vocabulary files (`language/data/*.json`): the only reader of them, and their digest."""

from __future__ import annotations

import hashlib
import json
import zlib
from functools import cache
from importlib import resources
from typing import Any

DATA_FILES = (
    "countries.json",
    "regions.json",
    "grapes.json",
    "dishes.json",
    "occasions.json",
    "wine_words.json",
    "dialogue.json",
    "budget.json",
    "table.json",
    "similar.json",
    "party.json",
    "taste.json",
    "glossary.json",
    "structure.json",
    "catalog_columns.json",
    "catalog_messages.json",
    "shop_shorthand.json",
    "named_wines.json",
    "mood_reasons.json",
    "appellations.json",
    "legal_words.json",
    "dish_styles.json",
    "intros.json",
    "filter_words.json",
    "shop_words.json",
    "answer_checks.json",
    "personal_data.json",
)


def data(name: str) -> Any:
    """One vocabulary file, parsed (cached). The only reader of language/data."""
    return _load(name)


@cache
def _load(name: str) -> Any:
    return json.loads(_data_bytes(name).decode("utf-8"))


def _data_bytes(name: str) -> bytes:
    """A vocabulary file's bytes: the repository keeps it as JSON, the Lambda layer gzipped beside the code
    (layers/sommelier/pack_data.py), which ships the tables in a fifth of the space."""
    folder = resources.files("sommelier.language") / "data"
    plain = folder / name
    if plain.is_file():
        return plain.read_bytes()
    # zlib reads the gzip format itself (wbits 16 + MAX_WBITS), without importing the gzip module
    return zlib.decompress((folder / f"{name}.gz").read_bytes(), wbits=16 + zlib.MAX_WBITS)


@cache
def version() -> str:
    """A digest of the vocabulary: rows normalised with another version are normalised again."""
    digest = hashlib.sha256()
    for name in DATA_FILES:
        digest.update(_data_bytes(name))
    return digest.hexdigest()[:12]
