"""Every wine shown fits the request as the customer stated it, whatever the model's one mistake
(tests/fakes/request_mistakes.py): a colour, a budget or an exclusion left out of or bent in its tool call, a
budget in thousands, a swapped range, the ruled-out country searched, «nothing found» or an empty
recommendation while the catalogue has fitting wines. Each case runs whole and streamed through the bot
(the consumer `sommelier serve` runs), on the shipped catalogue in the in-memory store.

The expectations are written by hand from data/catalog/wines.json: for each request, the names of the wines
that fit it. The customer's cards (the first line of each text or caption the fake Bot API delivered) must
name only those, and at least one.
"""

from __future__ import annotations

import json

import pytest
import sommelier.agent.loop as loop_module

from tests.conftest import CATALOG_FILE
from tests.fakes.request_mistakes import NOTHING_FOUND, MistakeModel
from tests.hardening.support import deliver, make_bot, shown_texts, text_update

CATALOGUE_NAMES = {w["name"] for w in json.loads(CATALOG_FILE.read_text("utf-8"))["wines"]}

WHITE_UP_TO_1500 = {
    "Rueda Verdejo",
    "Casal Garcia Vinho Verde",
    "Petit Chenin Blanc",
    "120 Sauvignon Blanc",
    "Цинандали",
    "Сибирьковый",
}
WHITE = WHITE_UP_TO_1500 | {
    "Sauvignon Blanc",
    "Chablis",
    "Meursault",
    "Dr. L Riesling",
    "Riesling Trocken",
    "Grüner Veltliner Federspiel Terrassen",
    "Gewurztraminer",
    "Pinot Grigio",
    "Albariño",
    "Tokaji Aszú 5 Puttonyos",
    "Шардоне",
    "Мускат белый Красного камня",
}
RED_DRY_UP_TO_2000 = {
    "Casillero del Diablo Cabernet Sauvignon Reserva",
    "Beaujolais-Villages",
    "Old Vine Zin",
    "Pinotage",
    "Мукузани",
    "Красностоп Золотовский",
    "Крю Лермонт Саперави",
    "Каберне",
}
CASES = {
    # id: (what the customer wrote, the model's search (None: it answers at once), its answer, what fits)
    "rose_for_white": ("Белое вино к рыбе", {"wine_type": "rose", "food_pairing": "рыба"}, "picks", WHITE),
    "still_for_sparkling_brut": (
        "Игристое брют на праздник",
        {"wine_type": "white", "grape_variety": "Шардоне"},
        "picks",
        {
            "Dom Pérignon Vintage",
            "Special Cuvée Brut",
            "Moët Impérial Brut",
            "Franciacorta Cuvée Prestige",
            "Prosecco DOC Treviso Brut",
            "Cordon Negro Brut",
            "Русское игристое брют белое",
            "Империал Брют Розе",
        },
    ),
    "over_budget": (
        "красное до 2000 к мясу",
        {"wine_type": "red", "food_pairing": "мясо"},
        "picks",
        RED_DRY_UP_TO_2000 | {"[yellow tail] Shiraz", "Киндзмараули"},
    ),
    "budget_in_thousands": (
        "посоветуйте белое до 2 тысяч",
        {"wine_type": "white", "price_max": 2},
        "picks",
        WHITE_UP_TO_1500 | {"Dr. L Riesling", "Шардоне"},
    ),
    "swapped_range": (
        "красное от 1000 до 2000 рублей",
        {"wine_type": "red", "price_min": 2000, "price_max": 1000},
        "picks",
        (RED_DRY_UP_TO_2000 - {"Каберне"}) | {"Киндзмараули"},
    ),
    "ruled_out_country_searched": (
        "красное сухое к пасте, не из Италии",
        {"wine_type": "red", "country": "Италия", "food_pairing": "паста"},
        "picks",
        RED_DRY_UP_TO_2000
        | {
            "Malbec",
            "Château Lynch-Bages",
            "Couvent des Jacobins Bourgogne Pinot Noir",
            "Côtes du Rhône Rouge",
            "Rioja Reserva",
            "Opus One",
            "Пино Нуар",
        },
    ),
    "not_french_then_nothing": (
        "белое сухое, только не французское",
        {"wine_type": "white", "sweetness": "dry", "region": "Эльзас"},
        "picks",
        {
            "Sauvignon Blanc",
            "Riesling Trocken",
            "Grüner Veltliner Federspiel Terrassen",
            "Pinot Grigio",
            "Albariño",
            "Rueda Verdejo",
            "Petit Chenin Blanc",
            "120 Sauvignon Blanc",
            "Цинандали",
            "Сибирьковый",
            "Шардоне",
        },
    ),
    "dropped_colour": (
        "розовое до 1500",
        {"price_max": 1500},
        "picks",
        {"Mateus Rosé", "De Casta Rosado", "Gran Feudo Rosado", "White Zinfandel", "Красностоп Золотовский Розе"},
    ),
    "dropped_budget": (
        "игристое до 1500",
        {"wine_type": "sparkling"},
        "picks",
        {
            "Asti",
            "Lambrusco Emilia Rosso Amabile",
            "Cordon Negro Brut",
            "Русское игристое брют белое",
            "Русское игристое полусладкое белое",
            "Цимлянское игристое красное полусладкое",
        },
    ),
    "over_constrained_nothing_found": (
        "красное сухое до 2000",
        {"wine_type": "red", "sweetness": "dry", "price_max": 2000, "grape_variety": "Неббиоло"},
        "nothing_found",
        RED_DRY_UP_TO_2000,
    ),
    "empty_recommendation": ("белое к рыбе до 1500", None, "empty_recommendation", WHITE_UP_TO_1500),
    "dropped_sweetness": (
        "полусладкое красное к десерту",
        {"wine_type": "red", "food_pairing": "десерт"},
        "picks",
        {"Киндзмараули", "Хванчкара"},
    ),
    "ruled_out_grape_searched": (
        "белое, только без шардоне",
        {"wine_type": "white", "grape_variety": "Шардоне"},
        "picks",
        WHITE - {"Chablis", "Meursault", "Шардоне"},
    ),
    "dropped_country": (
        "испанское вино до 1500",
        {"price_max": 1500},
        "picks",
        {"Rueda Verdejo", "De Casta Rosado", "Gran Feudo Rosado", "Cordon Negro Brut"},
    ),
}
BENT_TOOL_CALLS = {
    "rose_for_white",
    "still_for_sparkling_brut",
    "over_budget",
    "budget_in_thousands",
    "swapped_range",
    "ruled_out_country_searched",
    "not_french_then_nothing",
    "dropped_colour",
    "dropped_budget",
    "dropped_sweetness",
    "ruled_out_grape_searched",
    "dropped_country",
}


def test_the_expectations_name_catalogue_wines():
    for _, _, _, fits in CASES.values():
        assert fits <= CATALOGUE_NAMES, fits - CATALOGUE_NAMES


def _card_names(texts: list[str]) -> list[str]:
    """The wine each card names: the longest catalogue name in its first line (the card's name line)."""
    names = []
    for text in texts:
        first = text.strip().splitlines()[0] if text.strip() else ""
        named = [name for name in CATALOGUE_NAMES if name in first]
        if named:
            names.append(max(named, key=len))
    return names


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_the_customer_sees_only_wines_that_fit(case, streamed, environment, fresh_memory, telegram, llm, monkeypatch):
    said, search, answer, fits = CASES[case]
    turns: list[dict] = []
    original = loop_module.record_turn
    monkeypatch.setattr(loop_module, "record_turn", lambda metadata: (turns.append(metadata), original(metadata)))
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")
    monkeypatch.setenv("LLM_STREAM", "on" if streamed else "off")
    monkeypatch.setenv("TELEGRAM_PROGRESSIVE", "on" if streamed else "off")
    model = MistakeModel(search, answer)
    llm.default = model
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    assert bot.progressive is streamed
    deliver(bot, text_update(3500, said))

    texts = shown_texts(telegram)
    cards = _card_names(texts)
    assert cards, f"the customer sees wines: {texts}"
    assert set(cards) <= fits, f"{said!r}: shown {set(cards) - fits} that do not fit"
    assert len(cards) == len(set(cards)), "no wine twice"
    assert not any(NOTHING_FOUND in t or "ничего не нашлось" in t for t in texts), texts
    if streamed:
        assert any(c.method == "sendMessageDraft" for c in telegram.calls) or len(texts) > 2, "it streamed"
    (metadata,) = turns
    # A recommendation without wines fails the answer's validation: the answer is made from what was found.
    assert metadata["mode"] == ("degraded" if answer == "empty_recommendation" else "llm"), metadata
    if case in BENT_TOOL_CALLS and search is not None and model.searched:
        assert metadata["request_corrections"], "the correction of the model's search is logged"
    # open_turn (the beginning and the prefetch), the model's search if it made one, end_turn.
    own = "request_search" in metadata["tools_used"]
    assert metadata["tool_function_calls"] == 2 + bool(model.searched) + own, metadata["tools_used"]


def test_without_the_prefetch_the_models_search_is_still_held_to_the_request(
    environment, fresh_memory, telegram, llm, monkeypatch
):
    turns: list[dict] = []
    original = loop_module.record_turn
    monkeypatch.setattr(loop_module, "record_turn", lambda metadata: (turns.append(metadata), original(metadata)))
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")
    monkeypatch.setenv("LLM_PREFETCH", "off")
    said, search, answer, fits = CASES["swapped_range"]
    llm.default = MistakeModel(search, answer, picks=3)
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    deliver(bot, text_update(3600, said))
    cards = _card_names(shown_texts(telegram))
    assert cards and set(cards) <= fits, cards
    (metadata,) = turns
    assert metadata["request_corrections"] and metadata["tool_function_calls"] == 3  # begin, the search, end
