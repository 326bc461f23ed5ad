"""Pairing by a wine's style (language/data/dish_styles.json): which colours, sweetness and structure suit a
dish, for wines whose shop file lists no pairings, and the words that say why."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from sommelier import language

STRUCTURE = ("body", "tannin", "acidity")


@dataclass(frozen=True)
class DishStyle:
    colours: tuple[str, ...]
    sweetness: tuple[str, ...]
    # Each structure attribute's allowed levels (grapes.json words), or None when the dish does not care.
    body: tuple[str, ...] | None
    tannin: tuple[str, ...] | None
    acidity: tuple[str, ...] | None
    reason: str

    def levels(self, attribute: str) -> tuple[str, ...] | None:
        value: tuple[str, ...] | None = getattr(self, attribute)
        return value

    @property
    def has_structure(self) -> bool:
        return any(self.levels(a) is not None for a in STRUCTURE)


def _style(spec: dict[str, Any]) -> DishStyle:
    return DishStyle(
        colours=tuple(spec["colours"]),
        sweetness=tuple(spec["sweetness"]),
        body=tuple(spec["body"]) if "body" in spec else None,
        tannin=tuple(spec["tannin"]) if "tannin" in spec else None,
        acidity=tuple(spec["acidity"]) if "acidity" in spec else None,
        reason=spec["reason"],
    )


@cache
def _styles() -> tuple[dict[str, DishStyle], dict[str, DishStyle], language.PhraseIndex]:
    spec = language.data("dish_styles.json")
    dishes = {name: _style(item) for name, item in spec["dishes"].items()}
    categories = {name: _style(item) for name, item in spec["categories"].items()}
    return dishes, categories, language.PhraseIndex({name: name for name in dishes})


def _union(styles: list[DishStyle]) -> DishStyle:
    """Several categories («шашлык»: говядина, баранина, свинина): what suits any of them."""

    def merged(attribute: str) -> tuple[str, ...] | None:
        values = [s.levels(attribute) for s in styles]
        if any(v is None for v in values):
            return None
        return tuple(dict.fromkeys(level for v in values if v is not None for level in v))

    return DishStyle(
        colours=tuple(dict.fromkeys(c for s in styles for c in s.colours)),
        sweetness=tuple(dict.fromkeys(x for s in styles for x in s.sweetness)),
        body=merged("body"),
        tannin=merged("tannin"),
        acidity=merged("acidity"),
        reason=styles[0].reason,
    )


def dish_style(food: str) -> DishStyle | None:
    """The style that suits a dish: its own classic match when the table has one («устрицы», «утка»), else
    what suits its food categories; None for a dish the vocabulary does not know."""
    dishes, categories, index = _styles()
    named = index.find(language.normalize(food), fuzzy=True)
    if named:
        return dishes[named[0].value]
    known = [categories[c] for c in sorted(language.food_categories(food, fuzzy=True)) if c in categories]
    return _union(known) if known else None


def grades(style: DishStyle, attribute: str) -> list[int] | None:
    """The 1–5 grades a graded wine may have for the attribute, None when any will do."""
    levels = style.levels(attribute)
    if levels is None:
        return None
    scale = language.data("dish_styles.json")["grades"][attribute]
    return sorted({grade for level in levels for grade in scale[level]})


def style_grape_keys(style: DishStyle) -> list[str]:
    """The grapes whose typical structure suits the style (grapes.json): an ungraded wine is judged by them.
    A grape whose structure the data does not give suits no style that asks for one."""
    keys: set[str] = set()
    for grape in language.grapes():
        fits = all(
            (allowed := style.levels(attribute)) is None or getattr(grape, attribute) in allowed
            for attribute in STRUCTURE
        )
        if fits:
            keys.add(language.grape_key(grape.name))
    return sorted(keys)


def structure_words(style: DishStyle, grape_names: list[str]) -> str:
    """What the style asks of the wine, said of its first grape the data knows: «Пино Нуар: лёгкое тело,
    мягкие танины». Empty when the style asks nothing of structure or no grape is known."""
    words = language.data("dish_styles.json")["level_words"]
    for name in grape_names:
        grape = language.grape(name, fuzzy=False)
        if grape is None:
            continue
        said = [
            words[attribute][level]
            for attribute in STRUCTURE
            if style.levels(attribute) is not None and (level := getattr(grape, attribute)) is not None
        ]
        if said:
            return f"{grape.name}: {', '.join(said)}"
    return ""
