"""Food in a request or a shop's pairing column (dishes.json): dishes, groups and categories, matched on
stems and, in requests, on a dish noun's dictionary form («к гусю»): «стейк из говядины» → {говядина}."""

from __future__ import annotations

from functools import cache

from sommelier.language.phrases import Match, PhraseIndex
from sommelier.language.vocabulary import data


@cache
def _food() -> PhraseIndex:
    spec = data("dishes.json")
    labels: dict[str, str] = dict(spec["categories"])
    phrases: dict[str, set[str]] = {}
    for key, label in labels.items():
        phrases.setdefault(key, set()).add(key)
        phrases.setdefault(label, set()).add(key)
    for section in ("groups", "dishes"):
        for names, categories in spec[section].items():
            unknown = set(categories) - set(labels)
            if unknown:
                raise ValueError(f"dishes.json: {names!r} names unknown categories {sorted(unknown)}")
            for name in names.split("|"):
                phrases.setdefault(name, set()).update(categories)
    return PhraseIndex({phrase: frozenset(cats) for phrase, cats in phrases.items()})


def dishes_in(text: str, *, fuzzy: bool = False) -> list[Match]:
    """Dish and category phrases in a text; each Match.value is the frozenset of categories."""
    return _food().find(text, fuzzy=fuzzy)


def food_categories(text: str, *, fuzzy: bool = False) -> frozenset[str]:
    """The food categories a pairing or a request names: «стейк из говядины» → {говядина};
    «Закуски, салаты и антипасто» → {закуски, салаты, мясные деликатесы}; «паста» → {паста}."""
    result: set[str] = set()
    for match in dishes_in(text, fuzzy=fuzzy):
        result.update(match.value)
    return frozenset(result)
