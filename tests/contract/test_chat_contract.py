"""The conversation store's contract (ChatRepository), for both stores."""

from __future__ import annotations

import uuid

import pytest
from sommelier.domain.conversation import TurnRecord, TurnStats, UserInfo
from sommelier.domain.errors import InvalidArgument, PortError
from sommelier.domain.search import SearchFilters, SearchResult, ToolRequest

CHAT = 5001
USER = 7001


def _user(user_id: int = USER, chat_id: int = CHAT, **fields) -> UserInfo:
    return UserInfo(telegram_user_id=user_id, chat_id=chat_id, **fields)


def _turn(text: str, answer: str, *, update_id: int | None = None, chat_id: int = CHAT, **fields) -> TurnRecord:
    return TurnRecord(chat_id=chat_id, user_text=text, answer_text=answer, user_id=USER, update_id=update_id, **fields)


def _wine_ids(store, count: int = 2) -> list[str]:
    return [w.id for w in store.catalog.search_wines(SearchFilters(wine_type="red", limit=count)).wines]


def test_the_first_turn_creates_the_user_and_later_ones_find_them(backend):
    first = backend.chat.begin_turn(CHAT, user=_user(username="ann", first_name="  Анна   "), history_limit=10)
    assert first.created is True and first.history == []
    assert first.user is not None and (first.user.username, first.user.first_name) == ("ann", "Анна")
    assert first.user.is_active is True and first.user.profile == {}
    again = backend.chat.begin_turn(CHAT, user=_user(username="anna"), history_limit=10)
    assert again.created is False and again.user is not None and again.user.username == "anna"
    assert backend.chat.begin_turn(CHAT, user=None, history_limit=10).user is None


def test_open_turn_begins_the_turn_and_answers_each_search_in_one_invocation(backend):
    backend.chat.end_turn(_turn("красное к стейку", "Вот вино."), wine_ids=[])
    before = backend.chat.counter.count
    searches = [
        ToolRequest("search_wines", {"wine_type": "white", "price_max": 2000, "limit": 4}),
        ToolRequest("search_wines", {"price_max": "дёшево"}),  # a bad argument: that search's own error
        ToolRequest("get_wines", {"ids": []}),  # not a search: refused, the others still answer
    ]
    opened = backend.chat.open_turn(CHAT, user=_user(first_name="Анна"), history_limit=10, searches=searches)
    assert backend.chat.counter.count == before + 1, "one invocation for the beginning and the searches"
    assert opened.user is not None and opened.user.first_name == "Анна" and opened.created is True
    assert [m.content for m in opened.history] == ["красное к стейку", "Вот вино."]
    first, bad, other = opened.results
    assert isinstance(first, SearchResult) and 0 < len(first.wines) <= 4
    assert all(w.wine_type == "white" and w.price_rub <= 2000 for w in first.wines)
    assert first.wines == backend.catalog.search_wines(SearchFilters(wine_type="white", price_max=2000, limit=4)).wines
    assert isinstance(bad, InvalidArgument) and isinstance(other, PortError)
    plain = backend.chat.open_turn(CHAT, user=None, history_limit=10, searches=[])
    assert plain.results == [] and plain.user is None and len(plain.history) == 2


def test_a_turn_is_saved_and_read_back_in_order(backend):
    wines = _wine_ids(backend)
    backend.chat.begin_turn(CHAT, user=_user(), history_limit=10)
    end = backend.chat.end_turn(
        _turn("красное к стейку", "Вот два вина.\n\nПервое…", wine_ids=wines, response_type="recommendation"),
        wine_ids=wines,
    )
    assert end.saved is not None and end.saved.saved is True
    assert [w.id for w in end.wines] == wines and end.missing == []
    assert end.saved.user_message_id < end.saved.assistant_message_id
    history = backend.chat.history(CHAT)
    assert [(m.role, m.content) for m in history] == [
        ("user", "красное к стейку"),
        ("assistant", "Вот два вина.\n\nПервое…"),
    ]
    assert history[1].wine_ids == wines and history[1].response_type == "recommendation"
    assert [m.id for m in history] == [end.saved.user_message_id, end.saved.assistant_message_id]
    assert history[0].created_at <= history[1].created_at


def test_the_history_is_the_latest_turns_and_its_limit_is_bounded(backend):
    for index in range(4):
        backend.chat.end_turn(_turn(f"вопрос {index}", f"ответ {index}"), wine_ids=[])
    assert [m.content for m in backend.chat.history(CHAT, limit=3)] == ["ответ 2", "вопрос 3", "ответ 3"]
    assert len(backend.chat.history(CHAT, limit=1000)) == 8
    start = backend.chat.begin_turn(CHAT, user=None, history_limit=2)
    assert [m.content for m in start.history] == ["вопрос 3", "ответ 3"]
    assert backend.chat.history(CHAT + 1) == []


def test_a_redelivered_update_is_saved_once(backend):
    first = backend.chat.end_turn(
        _turn("привет", "Здравствуйте!", update_id=42, stats=TurnStats("offline")), wine_ids=[]
    )
    again = backend.chat.end_turn(
        _turn("привет", "Здравствуйте!", update_id=42, stats=TurnStats("offline")), wine_ids=[]
    )
    assert again.saved == first.saved
    assert len(backend.chat.history(CHAT)) == 2
    assert backend.shop.admin_stats().turns_today == 1  # the turn's figures once too


def test_end_turn_without_a_record_only_reads_the_wines(backend):
    wines = _wine_ids(backend)
    unknown = str(uuid.uuid4())
    end = backend.chat.end_turn(None, wine_ids=[*wines, unknown])
    assert end.saved is None and [w.id for w in end.wines] == wines and end.missing == [unknown]
    assert backend.chat.history(CHAT) == []


@pytest.mark.parametrize(
    "record",
    [
        _turn("", "ответ"),
        _turn("вопрос", "я" * 2001),
        _turn("вопрос", "ответ", response_type="poem"),
        _turn("вопрос", "ответ", wine_ids=["not-an-id"]),
        _turn("вопрос", "ответ", stats=TurnStats("")),
        _turn("вопрос", "ответ", stats=TurnStats("offline", llm_calls=-1)),
        _turn("вопрос", "ответ", chat_id=2**60),
    ],
    ids=["empty", "too-long", "response-type", "wine-id", "mode", "count", "chat-id"],
)
def test_a_turn_that_cannot_be_stored_is_refused_and_nothing_is_saved(backend, record):
    with pytest.raises(InvalidArgument):
        backend.chat.end_turn(record, wine_ids=[])
    assert backend.chat.history(CHAT) == []


def test_reset_archives_the_conversation(backend):
    backend.chat.end_turn(_turn("вопрос", "ответ"), wine_ids=[])
    backend.chat.end_turn(_turn("другой чат", "ответ", chat_id=CHAT + 1), wine_ids=[])
    assert backend.chat.reset_history(CHAT) == 2
    assert backend.chat.reset_history(CHAT) == 0
    assert backend.chat.history(CHAT) == [] and len(backend.chat.history(CHAT + 1)) == 2


def test_a_group_that_became_a_supergroup_keeps_its_conversation_votes_and_members(backend):
    group, supergroup = -100, -1000100
    backend.chat.upsert_user(_user(chat_id=group))
    saved = backend.chat.end_turn(_turn("вопрос", "ответ", chat_id=group), wine_ids=[]).saved
    assert saved is not None
    backend.chat.save_feedback(chat_id=group, user_id=USER, rating=1, message_id=saved.assistant_message_id)
    assert backend.chat.move_chat(group, supergroup) == 2
    assert len(backend.chat.history(supergroup)) == 2 and backend.chat.history(group) == []
    assert {s.chat_id for s in backend.chat.chat_state(USER)} == {supergroup}
    again = backend.chat.save_feedback(
        chat_id=supergroup, user_id=USER, rating=-1, message_id=saved.assistant_message_id
    )
    assert again.previous_rating == 1  # the vote moved with its chat
    with pytest.raises(InvalidArgument):
        backend.chat.move_chat(supergroup, supergroup)


def test_a_chat_is_marked_unreachable_and_a_message_from_it_makes_it_reachable_again(backend):
    backend.chat.upsert_user(_user(chat_id=USER))
    backend.chat.upsert_user(_user(chat_id=CHAT))
    assert backend.chat.set_active(USER, False, user_id=USER) == 1
    assert backend.chat.chat_state(USER) == sorted(backend.chat.chat_state(USER))
    assert {(s.chat_id, s.is_active) for s in backend.chat.chat_state(USER)} == {(USER, False), (CHAT, True)}
    backend.chat.set_active(CHAT, False)  # every member of the chat
    start = backend.chat.begin_turn(USER, user=_user(chat_id=USER), history_limit=1)
    assert start.user is not None and start.user.is_active is True
    assert {(s.chat_id, s.is_active) for s in backend.chat.chat_state(USER)} == {(USER, True), (CHAT, False)}
    assert backend.chat.set_active(9999, True) == 0


def test_a_second_press_replaces_the_vote_and_says_what_it_replaced(backend):
    saved = backend.chat.end_turn(_turn("вопрос", "ответ"), wine_ids=[]).saved
    assert saved is not None
    message = saved.assistant_message_id
    first = backend.chat.save_feedback(chat_id=CHAT, user_id=USER, rating=1, message_id=message)
    assert (first.saved, first.rating, first.previous_rating, first.changed) == (True, 1, None, False)
    same = backend.chat.save_feedback(chat_id=CHAT, user_id=USER, rating=1, message_id=message)
    assert (same.previous_rating, same.changed) == (1, False)
    changed = backend.chat.save_feedback(chat_id=CHAT, user_id=USER, rating=-1, message_id=message)
    assert (changed.rating, changed.previous_rating, changed.changed) == (-1, 1, True)
    assert backend.shop.admin_stats().dislikes_7d == 1 and backend.shop.admin_stats().likes_7d == 0


def test_a_stale_button_or_a_removed_wine_keeps_the_vote(backend):
    stale = backend.chat.save_feedback(chat_id=CHAT, user_id=USER, rating=1, message_id=999_999)
    removed = backend.chat.save_feedback(
        chat_id=CHAT, user_id=USER, rating=1, message_id=None, wine_id=str(uuid.uuid4())
    )
    assert stale.saved and removed.saved and stale.previous_rating is None
    assert backend.shop.admin_stats().likes_7d == 2


@pytest.mark.parametrize(
    "vote",
    [{"rating": 0}, {"rating": True}, {"rating": 2}, {"rating": 1, "message_id": 0}, {"rating": 1, "wine_id": "x"}],
    ids=["zero", "bool", "two", "message-id", "wine-id"],
)
def test_a_vote_that_is_not_a_vote_is_refused(backend, vote):
    with pytest.raises(InvalidArgument):
        backend.chat.save_feedback(chat_id=CHAT, user_id=USER, **{"message_id": None, **vote})


def test_a_learned_photo_id_is_kept_and_a_bad_one_is_only_missed(backend):
    (wine,) = _wine_ids(backend, 1)
    before = backend.repositories.counter.count
    backend.chat.remember_photo(wine, "AgAC-photo")
    backend.chat.remember_photo("not-an-id", "AgAC-other")  # a missed shortcut, never an error
    end = backend.chat.end_turn(None, wine_ids=[wine])
    assert end.wines[0].telegram_file_id == "AgAC-photo"
    assert backend.repositories.counter.count == before + 1  # only end_turn is an invocation


def test_every_call_counts_one_invocation(backend):
    counter = backend.repositories.counter
    before = counter.count
    backend.chat.begin_turn(CHAT, user=_user(), history_limit=5)
    backend.chat.end_turn(_turn("вопрос", "ответ"), wine_ids=[])
    backend.chat.history(CHAT)
    assert counter.count == before + 3
