"""A customer's taste as the bot remembers it between conversations (issue 37, item 6): what they liked and
disliked (👍/👎 on an answer, «понравилось второе», «беру первое», «не люблю кислое»), folded into a small
profile of styles, grapes, dislikes of a trait and a usual budget.

The profile is kept per Telegram user in the conversation store (migration 0013, `taste_profiles`), learned
there from a `TasteNote` by `learn` (the same function in PostgreSQL's tool function and the in-memory store,
so both keep the same profile), and read back with the turn's beginning. It only *ranks* the wines that already
meet the request (`score`): it never adds, drops or changes a condition the customer states now.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from sommelier.domain.wine import SWEETNESS_RU, WINE_TYPE_RU, Wine

TRAITS = ("acidity", "sweetness", "tannins", "body")  # a dislike of a wine that has much of it
MAX_WINES = 8  # the liked (and disliked) wines kept, the latest first
MAX_KEYS = 20  # the grapes and styles kept, the strongest first
_CAP = 5  # no single like weighs more than five


class TasteWine(NamedTuple):
    """A wine the customer liked or disliked, as it was then (the catalogue may change later)."""

    id: str
    name: str
    style: str  # "red:dry"
    grapes: list[str]  # as the catalogue writes them, without shares
    price: int


class TasteProfile(NamedTuple):
    liked: list[TasteWine] = []
    disliked: list[TasteWine] = []
    styles: dict[str, int] = {}  # "red:dry" → likes minus dislikes
    grapes: dict[str, int] = {}  # grape key → likes minus dislikes
    grape_names: dict[str, str] = {}  # grape key → the name to say
    traits: dict[str, int] = {}  # "acidity": -1 — «не люблю кислое»
    budget: int | None = None  # the usual price of the wines liked

    @property
    def empty(self) -> bool:
        return not (self.liked or self.disliked or self.styles or self.grapes or self.traits)


class TasteNote(NamedTuple):
    """What one turn or one vote teaches: wines liked or disliked (ids), traits disliked («кислое»: acidity -1)
    and grapes named with a like or a dislike («не люблю шардоне»)."""

    liked: list[str] = []
    disliked: list[str] = []
    traits: dict[str, int] = {}
    grapes: dict[str, int] = {}

    @property
    def empty(self) -> bool:
        return not (self.liked or self.disliked or self.traits or self.grapes)


def style_of(wine: Wine) -> str:
    return f"{wine.wine_type}:{wine.sweetness}"


def style_words(style: str) -> str:
    """«красное сухое» for "red:dry"."""
    kind, _, sweetness = style.partition(":")
    return " ".join(w for w in (WINE_TYPE_RU.get(kind, ""), SWEETNESS_RU.get(sweetness, "")) if w)


def grape_key(name: str) -> str:
    from sommelier.language.grape_names import grape_key as key  # the vocabulary loads with the first profile

    return key(name)


def _grapes(wine: Wine) -> list[str]:
    from sommelier.language.grape_names import parse_grape

    names = [parse_grape(g)[0].strip() for g in wine.grape_varieties]
    return [n for n in names if n]


def _is_uuid(value: object) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return isinstance(value, str)


def _remembered(wine: Wine) -> TasteWine:
    return TasteWine(wine.id, wine.name, style_of(wine), _grapes(wine), int(round(float(wine.price_rub))))


def _bump(counts: dict[str, int], key: str, by: int) -> None:
    value = max(-_CAP, min(_CAP, counts.get(key, 0) + by))
    if value:
        counts[key] = value
    else:
        counts.pop(key, None)


def _strongest(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:MAX_KEYS])


def _median(prices: list[int]) -> int | None:
    if not prices:
        return None
    ordered = sorted(prices)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) // 2


def learn(profile: TasteProfile | None, note: TasteNote, wines: Mapping[str, Wine]) -> TasteProfile:
    """The profile after a note; ``wines`` are the catalogue's rows of the note's wine ids (an id the
    catalogue no longer has teaches nothing)."""
    profile = profile or TasteProfile()
    styles, grapes, names = dict(profile.styles), dict(profile.grapes), dict(profile.grape_names)
    traits = dict(profile.traits)
    new_liked: list[TasteWine] = []
    new_disliked: list[TasteWine] = []
    for ids, sign in ((note.liked, 1), (note.disliked, -1)):
        for wine_id in dict.fromkeys(ids):
            wine = wines.get(wine_id)
            if wine is None:
                continue
            remembered = _remembered(wine)
            _bump(styles, remembered.style, sign)
            for grape in remembered.grapes:
                key = grape_key(grape)
                _bump(grapes, key, sign)
                names.setdefault(key, grape)
            (new_liked if sign > 0 else new_disliked).append(remembered)
    for grape, sign in note.grapes.items():
        key = grape_key(grape)
        _bump(grapes, key, 2 * (1 if sign > 0 else -1))  # said in words: stronger than one vote
        names.setdefault(key, grape)
    for trait, sign in note.traits.items():
        if trait in TRAITS:
            traits[trait] = 1 if sign > 0 else -1
    # The note's wines first, in its order; a wine liked now is no longer disliked, and the other way round.
    fresh = {w.id for w in (*new_liked, *new_disliked)}
    liked = [*new_liked, *(w for w in profile.liked if w.id not in fresh)][:MAX_WINES]
    disliked = [*new_disliked, *(w for w in profile.disliked if w.id not in fresh)][:MAX_WINES]
    grapes = _strongest(grapes)
    return TasteProfile(
        liked=liked,
        disliked=disliked,
        styles=_strongest(styles),
        grapes=grapes,
        grape_names={k: v for k, v in names.items() if k in grapes},
        traits=traits,
        budget=_median([w.price for w in liked]),
    )


def score(profile: TasteProfile | None, wine: Wine) -> float:
    """How much the remembered taste favours a wine (0: it says nothing of it; below 0: it leans away)."""
    if profile is None or profile.empty:
        return 0.0
    total = float(profile.styles.get(style_of(wine), 0))
    keys = {grape_key(g) for g in _grapes(wine)}
    total += sum(profile.grapes.get(k, 0) for k in keys)
    for trait, sign in profile.traits.items():
        level = _trait_level(wine, trait)
        if level is not None and sign < 0 and level >= 4:
            total -= 3.0
        elif level is not None and sign > 0 and level >= 4:
            total += 1.0
    if any(w.id == wine.id for w in profile.disliked):
        total -= 5.0
    return total


def _trait_level(wine: Wine, trait: str) -> int | None:
    if trait == "sweetness":
        return {"dry": 1, "semi_dry": 2, "semi_sweet": 4, "sweet": 5}.get(wine.sweetness)
    value = getattr(wine, trait, None)
    return value if isinstance(value, int) else None


def prefer(profile: TasteProfile | None, wines: Iterable[Wine]) -> list[Wine]:
    """The wines in the order the taste prefers; wines it says nothing of keep their order (a stable sort)."""
    listed = list(wines)
    if profile is None or profile.empty:
        return listed
    return sorted(listed, key=lambda w: -score(profile, w))


def liked_like(profile: TasteProfile | None, wine: Wine) -> TasteWine | None:
    """The liked wine this one resembles (its grape, else its style), the latest first; None if none."""
    if profile is None:
        return None
    keys = {grape_key(g) for g in _grapes(wine)}
    for liked in profile.liked:
        if liked.id != wine.id and keys & {grape_key(g) for g in liked.grapes}:
            return liked
    return None


# --------------------------------------------------------------------------- JSON (the stored row)


def to_json(profile: TasteProfile) -> dict[str, Any]:
    return {
        "liked": [w._asdict() for w in profile.liked],
        "disliked": [w._asdict() for w in profile.disliked],
        "styles": dict(profile.styles),
        "grapes": dict(profile.grapes),
        "grape_names": dict(profile.grape_names),
        "traits": dict(profile.traits),
        "budget": profile.budget,
    }


def _wines(value: object) -> list[TasteWine]:
    wines: list[TasteWine] = []
    for item in value if isinstance(value, list) else []:
        try:
            wines.append(
                TasteWine(
                    str(item["id"]),
                    str(item["name"]),
                    str(item["style"]),
                    [str(g) for g in item.get("grapes") or []],
                    int(item["price"]),
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a row an older version wrote differently: skipped, never a failed turn
    return wines


def _counts(value: object) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def from_json(value: object) -> TasteProfile:
    if not isinstance(value, dict):
        return TasteProfile()
    budget = value.get("budget")
    names = value.get("grape_names")
    return TasteProfile(
        liked=_wines(value.get("liked")),
        disliked=_wines(value.get("disliked")),
        styles=_counts(value.get("styles")),
        grapes=_counts(value.get("grapes")),
        grape_names={str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {},
        traits={k: v for k, v in _counts(value.get("traits")).items() if k in TRAITS},
        budget=budget if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0 else None,
    )


def note_from_json(value: object) -> TasteNote:
    """A note as the wire carries it (end_turn's ``taste``); bad parts are dropped."""
    if not isinstance(value, dict):
        return TasteNote()

    def ids(key: str) -> list[str]:
        items = value.get(key)
        return [i for i in items if _is_uuid(i)][:MAX_WINES] if isinstance(items, list) else []

    return TasteNote(
        liked=ids("liked"),
        disliked=ids("disliked"),
        traits={k: v for k, v in _counts(value.get("traits")).items() if k in TRAITS},
        grapes=dict(list(_counts(value.get("grapes")).items())[:MAX_KEYS]),
    )


# --------------------------------------------------------------------------- in words (/profile, the prompt)

TRAIT_WORDS = {"acidity": "кислое", "sweetness": "сладкое", "tannins": "терпкое", "body": "тяжёлое, плотное"}
_SHOWN = 5


def _price(rub: int) -> str:
    return f"{rub:,}".replace(",", " ") + " ₽"


def _wine_line(wine: TasteWine) -> str:
    return f"{wine.name} ({style_words(wine.style)})" if style_words(wine.style) else wine.name


def _leaning(profile: TasteProfile, sign: int) -> list[str]:
    """The styles, grapes and traits the profile leans to (sign 1) or away from (sign -1), in words."""
    styles = [style_words(s) for s, v in profile.styles.items() if v * sign > 0 and style_words(s)]
    grapes = [profile.grape_names.get(k, k) for k, v in profile.grapes.items() if v * sign > 0]
    traits = [TRAIT_WORDS[t] for t, v in profile.traits.items() if v * sign > 0]
    if sign > 0:
        return [*styles[:3], *grapes[:_SHOWN], *traits]
    return [*traits, *grapes, *styles][: _SHOWN + 2]


def describe(profile: TasteProfile) -> list[str]:
    """The profile as lines a customer reads (/profile) and the model is shown (fenced as data)."""
    lines: list[str] = []
    if profile.liked:
        lines.append("Понравились: " + "; ".join(_wine_line(w) for w in profile.liked[:_SHOWN]))
    if profile.disliked:
        lines.append("Не понравились: " + "; ".join(_wine_line(w) for w in profile.disliked[:_SHOWN]))
    for sign, lead in ((1, "Нравится: "), (-1, "Не нравится: ")):
        words = _leaning(profile, sign)
        if words:
            lines.append(lead + ", ".join(words))
    if profile.budget:
        lines.append(f"Обычно выбираете вино около {_price(profile.budget)}")
    return lines
