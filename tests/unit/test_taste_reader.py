"""What a message says of the customer's own taste (offline/taste.py) and how a profile ranks (domain/taste.py).
The wines are written here by hand; what each phrase must teach is read off the phrase."""

from __future__ import annotations

import pytest
from sommelier.domain.taste import TasteNote, TasteProfile, from_json, learn, note_from_json, prefer, score, to_json
from sommelier.domain.wine import Wine
from sommelier.offline.taste import read_taste


def _wine(n: int, name: str, grapes: list[str], kind: str = "red", sweetness: str = "dry", acidity: int = 3) -> Wine:
    return Wine(
        id=f"00000000-0000-4000-8000-00000000000{n}",
        name=name,
        producer=f"Производитель {n}",
        region="",
        vintage_year=None,
        grape_varieties=grapes,
        wine_type=kind,
        sweetness=sweetness,
        body=3,
        tannins=3,
        acidity=acidity,
        price_rub=1000 * n,
        description="вино",
        tasting_notes="",
        food_pairings=[],
    )


MUKUZANI = _wine(1, "Мукузани", ["Саперави"])
KRASNOSTOP = _wine(2, "Красностоп Золотовский", ["Красностоп"])
RIESLING = _wine(3, "Riesling Trocken", ["Рислинг"], kind="white", acidity=5)
SHOWN = [MUKUZANI, KRASNOSTOP, RIESLING]


@pytest.mark.parametrize(
    ("text", "liked", "disliked"),
    [
        ("понравилось второе", [KRASNOSTOP], []),
        ("беру первое", [MUKUZANI], []),
        ("возьму Мукузани", [MUKUZANI], []),
        ("очень понравилось, спасибо!", SHOWN, []),
        ("не понравилось третье", [], [RIESLING]),
        ("первое не зашло, а второе понравилось", [KRASNOSTOP], [MUKUZANI]),
        ("не понравилось", [], SHOWN),
    ],
)
def test_likes_and_dislikes_of_the_shown_wines(text, liked, disliked):
    note = read_taste(text, lambda: SHOWN)
    assert note is not None
    assert (note.liked, note.disliked) == ([w.id for w in liked], [w.id for w in disliked])


@pytest.mark.parametrize(
    ("text", "traits", "grapes"),
    [
        ("не люблю кислое", {"acidity": -1}, {}),
        ("терпеть не могу приторное", {"sweetness": -1}, {}),
        ("люблю терпкие вина", {"tannins": 1}, {}),
        ("не люблю шардоне", {}, {"Шардоне": -1}),
        ("обожаю пино нуар", {}, {"Пино Нуар": 1}),
    ],
)
def test_traits_and_grapes_said_in_words(text, traits, grapes):
    note = read_taste(text, list)
    assert note is not None and (note.traits, note.grapes) == (traits, grapes)


@pytest.mark.parametrize(
    "text", ["красное сухое к стейку", "сладкое она не пьёт", "что такое танины?", "а второе — оно сухое?", ""]
)
def test_a_message_that_says_nothing_of_the_customers_own_taste_teaches_nothing(text):
    assert read_taste(text, lambda: SHOWN) is None


def test_the_shown_wines_are_read_only_when_the_message_speaks_of_taste():
    def never() -> list[Wine]:
        raise AssertionError("loaded for a message that says nothing of taste")

    assert read_taste("белое к рыбе", never) is None


def test_a_profile_ranks_only_and_keeps_the_order_of_what_it_says_nothing_of():
    profile = learn(None, TasteNote(liked=[KRASNOSTOP.id], traits={"acidity": -1}), {KRASNOSTOP.id: KRASNOSTOP})
    other = _wine(4, "Каберне", ["Каберне Совиньон"], kind="rose")
    ranked = prefer(profile, [RIESLING, other, MUKUZANI, KRASNOSTOP])
    assert ranked == [KRASNOSTOP, MUKUZANI, other, RIESLING]  # red dry liked; acidity 5 disliked; rosé untouched
    assert score(profile, other) == 0 and score(TasteProfile(), KRASNOSTOP) == 0


def test_the_profile_round_trips_as_json_and_bad_rows_are_skipped():
    profile = learn(None, TasteNote(liked=[MUKUZANI.id], grapes={"Рислинг": -1}), {MUKUZANI.id: MUKUZANI})
    assert from_json(to_json(profile)) == profile
    assert from_json({"liked": [{"id": 1}], "styles": {"red:dry": "много"}, "budget": -5}) == TasteProfile()
    assert note_from_json({"liked": ["x", MUKUZANI.id], "traits": {"acidity": -1, "colour": 1}}) == TasteNote(
        liked=[MUKUZANI.id], traits={"acidity": -1}
    )


def test_the_profile_and_the_note_cross_the_tool_functions_wire():
    """The Lambda adapter reads the profile back with from_wire; the tool function reads the note from JSON."""
    from sommelier.domain.conversation import TurnRecord, TurnStart
    from sommelier.domain.wire import from_wire, to_wire

    profile = learn(None, TasteNote(liked=[MUKUZANI.id], traits={"acidity": -1}), {MUKUZANI.id: MUKUZANI})
    start = TurnStart(user=None, history=[], taste=profile)
    assert from_wire(TurnStart, to_wire(start)) == start
    assert from_wire(TurnStart, {"user": None, "history": []}).taste is None  # a tool function that predates it
    record = TurnRecord(
        chat_id=1, user_text="не люблю кислое", answer_text="Учту.", taste=TasteNote(traits={"acidity": -1})
    )
    assert note_from_json(to_wire(record)["taste"]) == TasteNote(traits={"acidity": -1})
