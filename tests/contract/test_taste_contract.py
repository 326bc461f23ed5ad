"""The remembered taste's contract (ChatRepository.taste_profile, what votes and a turn's note teach, and /forget),
for both stores. Expectations are counted by hand from the catalogue rows the test picks."""

from __future__ import annotations

import pytest
from sommelier.domain.conversation import TurnRecord, UserInfo
from sommelier.domain.search import SearchFilters
from sommelier.domain.taste import TasteNote, TasteProfile

CHAT = 5101
USER = 7101


def _turn(text: str, answer: str, *, update_id: int | None = None, **fields) -> TurnRecord:
    return TurnRecord(chat_id=CHAT, user_text=text, answer_text=answer, user_id=USER, update_id=update_id, **fields)


def _wines(backend, **filters):
    return backend.catalog.search_wines(SearchFilters(**filters, limit=2)).wines


def test_nothing_is_kept_before_the_customer_says_anything(backend):
    assert backend.chat.taste_profile(USER) == TasteProfile()
    start = backend.chat.begin_turn(CHAT, user=UserInfo(USER, CHAT), history_limit=5)
    assert start.taste is None


def test_a_thumbs_up_teaches_the_answers_wines_and_a_changed_vote_turns_it_round(backend):
    wines = _wines(backend, wine_type="red", sweetness="dry")
    assert len(wines) == 2
    ids = [w.id for w in wines]
    saved = backend.chat.end_turn(_turn("красное сухое", "Вот два вина.", wine_ids=ids), wine_ids=ids).saved
    assert saved is not None
    backend.chat.save_feedback(chat_id=CHAT, user_id=USER, rating=1, message_id=saved.assistant_message_id)
    liked = backend.chat.taste_profile(USER)
    assert [w.id for w in liked.liked] == [w.id for w in wines] and liked.disliked == []
    assert liked.styles == {"red:dry": 2}
    prices = sorted(int(w.price_rub) for w in wines)
    assert liked.budget == (prices[0] + prices[1]) // 2
    backend.chat.save_feedback(chat_id=CHAT, user_id=USER, rating=1, message_id=saved.assistant_message_id)
    assert backend.chat.taste_profile(USER) == liked, "the same press again teaches nothing"
    backend.chat.save_feedback(chat_id=CHAT, user_id=USER, rating=-1, message_id=saved.assistant_message_id)
    turned = backend.chat.taste_profile(USER)
    assert turned.liked == [] and [w.id for w in turned.disliked] == [w.id for w in wines]
    assert turned.styles == {"red:dry": -2} and turned.budget is None


def test_a_turns_note_is_learnt_once_and_comes_back_with_the_next_turn(backend):
    note = TasteNote(traits={"acidity": -1}, grapes={"Шардоне": -1})
    record = _turn("не люблю кислое и шардоне", "Учту.", update_id=41, taste=note)
    backend.chat.end_turn(record, wine_ids=[])
    backend.chat.end_turn(record, wine_ids=[])  # a redelivery of the same update
    kept = backend.chat.taste_profile(USER)
    assert kept.traits == {"acidity": -1} and list(kept.grapes.values()) == [-2]
    assert list(kept.grape_names.values()) == ["Шардоне"]
    start = backend.chat.begin_turn(CHAT, user=UserInfo(USER, CHAT), history_limit=5)
    assert start.taste == kept
    opened = backend.chat.open_turn(CHAT, user=UserInfo(USER, CHAT), history_limit=5, searches=[])
    assert opened.taste == kept


def test_a_note_with_bad_parts_saves_the_turn_and_teaches_only_what_is_sound(backend):
    white = _wines(backend, wine_type="white")[0]
    note = TasteNote(liked=["not-a-wine", white.id], traits={"sweetness": -1, "colour": 1})
    saved = backend.chat.end_turn(_turn("понравилось", "Рад!", taste=note), wine_ids=[]).saved
    assert saved is not None and saved.saved
    kept = backend.chat.taste_profile(USER)
    assert [w.id for w in kept.liked] == [white.id] and kept.traits == {"sweetness": -1}


def test_forget_erases_the_taste(backend):
    backend.chat.end_turn(_turn("не люблю сладкое", "Учту.", taste=TasteNote(traits={"sweetness": -1})), wine_ids=[])
    assert not backend.chat.taste_profile(USER).empty
    result = backend.shop.forget_user(USER)
    assert result.deleted["taste_profiles"] == 1
    assert backend.chat.taste_profile(USER) == TasteProfile()
    assert backend.shop.forget_user(USER).deleted["taste_profiles"] == 0


@pytest.mark.parametrize("user_id", [True, "7101", 2**60])
def test_a_user_id_that_is_not_one_is_refused(backend, user_id):
    from sommelier.domain.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        backend.chat.taste_profile(user_id)
