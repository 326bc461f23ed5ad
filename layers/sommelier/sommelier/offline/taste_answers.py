"""The remembered taste in an offline answer (issue 37, item 6): the wines that already meet the request are
ranked by the customer's profile (domain/taste.py), and when that changed what is shown the intro says why
(«Вам понравился Красностоп Золотовский — вот похожие.»). It never adds, drops or changes a condition."""

from __future__ import annotations

from collections.abc import Callable

from sommelier.domain.answer import SommelierResponse
from sommelier.domain.taste import TRAIT_WORDS, TasteProfile, liked_like, prefer, score, style_of, style_words
from sommelier.domain.wine import Wine


def ranked(taste: TasteProfile | None, candidates: list[Wine]) -> list[Wine]:
    return prefer(taste, candidates)


def why(taste: TasteProfile, picks: list[Wine]) -> str | None:
    """The sentence that says what of the remembered taste chose the picks; None when nothing did."""
    if not picks:
        return None
    top = picks[0]
    again = next((w for w in taste.liked if w.id == top.id), None)
    if again is not None:
        return f"Вам понравился {again.name} — начал с него."
    liked = next((found for found in (liked_like(taste, w) for w in picks) if found is not None), None)
    if liked is not None:
        return f"Вам понравился {liked.name} — вот похожие."
    grapes = [taste.grape_names.get(k, k) for k, v in taste.grapes.items() if v > 0]
    named = [g for g in grapes if any(g.casefold() in v.casefold() for v in top.grape_varieties)]
    if named:
        return f"Помню, вам нравится {named[0]} — начал с него."
    avoided = next(
        (t for t, v in taste.traits.items() if v < 0 and score(TasteProfile(traits={t: -1}), top) >= 0), None
    )
    if avoided is not None:
        return f"Помню, что вы не любите {TRAIT_WORDS[avoided].split(',')[0]}, — начал с вина без этого."
    if taste.styles.get(style_of(top), 0) > 0:
        return f"Помню, вам нравится {style_words(style_of(top))}."
    return None


def with_taste(
    taste: TasteProfile | None,
    candidates: list[Wine],
    choose: Callable[[list[Wine]], list[Wine]],
) -> tuple[list[Wine], str | None]:
    """The picks from the candidates as the taste ranks them, and the sentence to say when the taste changed
    them (the picks without it differ)."""
    plain = choose(candidates)
    if taste is None or taste.empty:
        return plain, None
    picks = choose(ranked(taste, candidates))
    if [w.id for w in picks] == [w.id for w in plain]:
        return picks, None
    return picks, why(taste, picks)


def said(response: SommelierResponse, sentence: str | None) -> SommelierResponse:
    """The answer with the taste's sentence first in its intro (within the intro's limit)."""
    if not sentence or not response.wines:
        return response
    intro = f"{sentence} {response.intro}".strip()
    return response.model_copy(update={"intro": intro}) if len(intro) <= 500 else response
