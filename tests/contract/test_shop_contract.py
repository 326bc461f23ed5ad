"""The shop's records' contract (ShopRepository), for both stores."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sommelier.domain.conversation import TurnRecord, TurnStats, UserInfo
from sommelier.domain.errors import InvalidArgument
from sommelier.domain.records import ImportRow, WineRecord
from sommelier.domain.search import SearchFilters

CUSTOMER = 8001
OTHER = 8002


def _say(store, user: int, chat: int, text: str, *, wine_ids=(), mode: str = "offline", tokens: int = 0) -> int:
    """One saved turn; the answer's message id."""
    store.chat.upsert_user(UserInfo(user, chat))
    saved = store.chat.end_turn(
        TurnRecord(
            chat_id=chat,
            user_id=user,
            user_text=text,
            answer_text=f"Ответ на «{text}»",
            wine_ids=list(wine_ids),
            response_type="recommendation" if wine_ids else "informational",
            stats=TurnStats(mode, llm_calls=1 if tokens else 0, prompt_tokens=tokens, completion_tokens=tokens // 10),
        ),
        wine_ids=list(wine_ids),
    ).saved
    assert saved is not None and saved.assistant_message_id is not None
    return saved.assistant_message_id


def _window() -> tuple[str, str]:
    now = datetime.now(UTC)
    return (now - timedelta(days=1)).isoformat(), (now + timedelta(days=1)).isoformat()


def test_the_age_answer_is_kept_and_changed(backend):
    assert backend.shop.get_age_answer(CUSTOMER) is None
    backend.shop.save_age_answer(CUSTOMER, False)
    backend.shop.save_age_answer(CUSTOMER, True)
    assert backend.shop.get_age_answer(CUSTOMER) is True
    with pytest.raises(InvalidArgument):
        backend.shop.get_age_answer(2**60)


def test_forgetting_a_customer_deletes_everything_kept_about_them(backend):
    message = _say(backend, CUSTOMER, CUSTOMER, "привет")
    _say(backend, CUSTOMER, -300, "в группе")
    _say(backend, OTHER, -300, "другой")
    backend.chat.save_feedback(chat_id=CUSTOMER, user_id=CUSTOMER, rating=1, message_id=message)
    backend.shop.save_age_answer(CUSTOMER, True)
    result = backend.shop.forget_user(CUSTOMER)
    # both messages of each of their turns (a turn's answer carries the customer's id too)
    assert result.deleted == {"feedback": 1, "messages": 4, "age_answers": 1, "taste_profiles": 0, "users": 1}
    assert backend.chat.history(CUSTOMER) == [] and backend.shop.get_age_answer(CUSTOMER) is None
    assert [m.content for m in backend.chat.history(-300)] == ["другой", "Ответ на «другой»"]
    assert backend.chat.chat_state(CUSTOMER) == []
    assert backend.shop.admin_stats().customers == 1
    assert backend.shop.forget_user(CUSTOMER).deleted == {
        "feedback": 0,
        "messages": 0,
        "age_answers": 0,
        "taste_profiles": 0,
        "users": 0,
    }


def test_old_messages_are_purged_and_their_votes_kept_unlinked(backend):
    message = _say(backend, CUSTOMER, CUSTOMER, "давнее")
    backend.chat.save_feedback(chat_id=CUSTOMER, user_id=CUSTOMER, rating=1, message_id=message)
    backend.backdate("messages", timedelta(days=40))
    _say(backend, CUSTOMER, CUSTOMER, "недавнее")
    assert backend.shop.purge_old_messages(30) == 2
    assert [m.content for m in backend.chat.history(CUSTOMER)] == ["недавнее", "Ответ на «недавнее»"]
    assert backend.shop.admin_stats().likes_7d == 1
    assert backend.shop.purge_old_messages(30) == 0
    for days in (0, 3651, True):
        with pytest.raises(InvalidArgument):
            backend.shop.purge_old_messages(days)


def _with_skus(store) -> list[str]:
    """Two wines given skus by an import (by their id): their ids."""
    wines = store.catalog.export_wines()[:2]
    rows = [
        ImportRow(WineRecord.model_validate({**{k: v for k, v in w.as_file_row().items() if v is not None}, "sku": s}))
        for w, s in zip(wines, ("SKU-1", "SKU-2"), strict=True)
    ]
    store.catalog.import_wines(rows)
    return [w.id for w in wines]


def test_wines_are_found_by_sku_or_id_in_the_order_asked(backend):
    first, second = _with_skus(backend)
    found = backend.shop.find_wines(["SKU-2", " nope ", first])
    assert [(s.ref, s.wine.id) for s in found.wines] == [("SKU-2", second), (first, first)]
    assert found.missing == ["nope"]
    for refs in ([], ["x" * 101], [""]):
        with pytest.raises(InvalidArgument):
            backend.shop.find_wines(refs)


def test_a_wine_card_shows_the_wine_and_two_similar_available_ones(catalogue):
    wine = catalogue.catalog.search_wines(SearchFilters(name="Malbec")).wines[0]
    card = catalogue.shop.wine_card(wine.id)
    assert card.wine is not None and card.wine.id == wine.id and card.unavailable is None
    assert len(card.similar) == 2 and wine.id not in {w.id for w in card.similar}
    assert card.alternatives == []


def test_an_unknown_ref_gets_alternatives_with_its_words_first(catalogue):
    card = catalogue.shop.wine_card("Sassicaia 2099")
    assert card.wine is None and len(card.alternatives) == 3
    assert card.alternatives[0].name == "Sassicaia"
    plain = catalogue.shop.wine_card(str(uuid.uuid4()))
    assert plain.wine is None and len(plain.alternatives) == 3
    with pytest.raises(InvalidArgument):
        catalogue.shop.wine_card("  ")


def test_a_sold_out_wine_gets_the_most_similar_available_ones(backend):
    wines = backend.catalog.export_wines()
    sold_out = wines[0]
    rows = [
        ImportRow(WineRecord.model_validate({k: v for k, v in w.as_file_row().items() if v is not None}))
        for w in wines[1:]
    ]
    backend.catalog.import_wines(rows, replace=True)
    card = backend.shop.wine_card(sold_out.id)
    assert card.wine is None and card.unavailable is not None and card.unavailable.id == sold_out.id
    assert len(card.alternatives) == 3 and all(w.available for w in card.alternatives)


def test_the_report_counts_turns_customers_votes_and_questions(backend):
    wines = [w.id for w in backend.catalog.search_wines(SearchFilters(wine_type="white", limit=2)).wines]
    message = _say(backend, CUSTOMER, CUSTOMER, "белое к рыбе", wine_ids=wines, mode="llm", tokens=1000)
    _say(backend, OTHER, OTHER, "что такое танины", mode="offline")
    _say(backend, OTHER, OTHER, "спасибо", mode="offline")
    backend.chat.save_feedback(chat_id=CUSTOMER, user_id=CUSTOMER, rating=1, message_id=message)
    backend.chat.save_feedback(chat_id=OTHER, user_id=OTHER, rating=-1, message_id=None, wine_id=wines[1])
    report = backend.shop.report_data(*_window())
    assert [(m.mode, m.turns, m.llm_calls, m.prompt_tokens, m.completion_tokens) for m in report.modes] == [
        ("llm", 1, 1, 1000, 100),
        ("offline", 2, 0, 0, 0),
    ]
    assert report.customers == 2
    assert {(v.wine_id, v.up, v.down) for v in report.votes} == {(wines[0], 1, 0), (wines[1], 1, 1)}
    assert report.votes[0].wine_id == wines[1]  # more votes of each kind first
    assert [(q.text, q.wines_shown, q.response_type) for q in report.queries] == [
        ("спасибо", 0, "informational"),
        ("что такое танины", 0, "informational"),
        ("белое к рыбе", 2, "recommendation"),
    ]
    later = backend.shop.report_data(
        (datetime.now(UTC) + timedelta(days=2)).isoformat(), (datetime.now(UTC) + timedelta(days=3)).isoformat()
    )
    assert (later.modes, later.customers, later.votes, later.queries) == ([], 0, [], [])


@pytest.mark.parametrize(
    ("since", "until"),
    [
        ("2026-01-05", "2026-01-06T00:00:00+00:00"),
        ("2026-01-06T00:00:00+00:00", "2026-01-05T00:00:00+00:00"),
        ("2025-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00"),
        ("yesterday", "today"),
    ],
    ids=["no-zone", "reversed", "too-long", "not-a-time"],
)
def test_a_report_window_that_is_not_one_is_refused(catalogue, since, until):
    with pytest.raises(InvalidArgument):
        catalogue.shop.report_data(since, until)


def test_the_admins_figures_count_today_and_the_last_seven_days(backend, shipped_wines):
    _say(backend, CUSTOMER, CUSTOMER, "первый", mode="llm", tokens=500)
    _say(backend, OTHER, OTHER, "второй", mode="llm", tokens=300)
    backend.backdate("turn_stats", timedelta(days=8))
    _say(backend, CUSTOMER, CUSTOMER, "третий", mode="llm", tokens=100)
    stats = backend.shop.admin_stats()
    assert (stats.customers, stats.turns_today, stats.turns_7d) == (2, 1, 1)
    assert (stats.prompt_tokens_7d, stats.completion_tokens_7d) == (100, 10)
    assert stats.wines == len(shipped_wines)


def test_the_shops_facts_are_kept_whole_and_reach_every_turn(backend):
    from sommelier.domain.shop_facts import read_facts

    assert backend.shop.shop_facts() is None
    assert backend.chat.begin_turn(CUSTOMER, user=None, history_limit=5).shop is None
    facts = read_facts(
        {
            "name": "Лоза",
            "stores": [
                {
                    "id": "lenina",
                    "name": "Лоза на Ленина",
                    "address": "ул. Ленина, 24",
                    "hours": "ежедневно 10:00–22:00",
                }
            ],
            "promotions": [{"text": "скидка", "until": "2030-01-31"}],
            "reservations": True,
        }
    )
    assert backend.shop.put_shop_facts(facts) == facts
    assert backend.shop.shop_facts() == facts
    assert backend.chat.begin_turn(CUSTOMER, user=None, history_limit=5).shop == facts
    assert backend.shop.put_shop_facts(None) is None and backend.shop.shop_facts() is None
