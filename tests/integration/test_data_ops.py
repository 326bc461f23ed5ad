"""The data operations the agent needs besides the two LLM tools (docs/architecture.md), through handle()."""

from __future__ import annotations

import json
import math

import pytest
from sommelier.toolfn.handler import handle

from tests.conftest import CATALOG_FILE, expected_photo_key

CHAT = 777_000_111
USER = 555_000_222
UNKNOWN_ID = "00000000-0000-0000-0000-000000000000"


def call(db, tool, **arguments):
    result = handle({"tool": tool, "arguments": arguments}, db)
    assert isinstance(result, dict)
    json.dumps(result)
    return result


def ok(db, tool, **arguments):
    result = call(db, tool, **arguments)
    assert "error" not in result, result
    return result


def error(db, tool, **arguments) -> str:
    result = call(db, tool, **arguments)
    assert "error" in result, result
    return result["error"]


def fingerprint(db) -> tuple:
    """A checksum of every table the tools can touch."""
    with db.connection() as conn:
        return tuple(
            conn.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {table} t"
            ).fetchone()
            for table in ("wines", "users", "messages", "feedback")
        )


def some_ids(db, count: int, **filters) -> list[str]:
    return [w["id"] for w in ok(db, "search_wines", limit=count, **filters)["wines"]]


# ---------------------------------------------------------------- get_wines


def test_get_wines_keeps_the_order_asked_and_lists_missing(catalog_db):
    ids = some_ids(catalog_db, 4)
    asked = [ids[2], UNKNOWN_ID, ids[0], ids[3].upper(), ids[1]]
    result = ok(catalog_db, "get_wines", ids=asked)
    assert [w["id"] for w in result["wines"]] == [ids[2], ids[0], ids[3], ids[1]]
    assert result["missing"] == [UNKNOWN_ID]


def test_get_wines_full_record(catalog_db, shipped_wines):
    wine_id = some_ids(catalog_db, 1, region="Мендоса")[0]
    wine = ok(catalog_db, "get_wines", ids=[wine_id])["wines"][0]
    source = next(w for w in shipped_wines if w["name"] == wine["name"] and w["producer"] == wine["producer"])
    assert wine["country"] == source["country"]
    assert wine["region_name"] == source["region"]
    assert wine["region"] == f"{source['region']}, {source['country']}"
    assert wine.get("appellation") == source.get("appellation")  # an absent field is left out of the answer
    assert wine["image_key"] == expected_photo_key(CATALOG_FILE.parent / source["image"])
    assert "telegram_file_id" not in wine


def test_get_wines_duplicates_and_empty(catalog_db):
    wine_id = some_ids(catalog_db, 1)[0]
    assert [w["id"] for w in ok(catalog_db, "get_wines", ids=[wine_id, wine_id])["wines"]] == [wine_id]
    assert ok(catalog_db, "get_wines", ids=[]) == {"wines": [], "missing": []}
    assert ok(catalog_db, "get_wines", ids=[UNKNOWN_ID]) == {"wines": [], "missing": [UNKNOWN_ID]}


@pytest.mark.parametrize(
    "arguments", [{}, {"ids": None}, {"ids": "x"}, {"ids": ["x"]}, {"ids": [1]}, {"ids": [UNKNOWN_ID] * 201}]
)
def test_get_wines_bad_ids(catalog_db, arguments):
    assert "ids" in error(catalog_db, "get_wines", **arguments)


# ---------------------------------------------------------------- get_list


def test_get_list_interleaves_types_at_typical_prices(catalog_db, shipped_wines):
    result = ok(catalog_db, "get_list")
    wines = result["wines"]
    assert result["found"] == len(wines) == 20  # the fallback default
    types = {w["wine_type"] for w in shipped_wines}
    assert {w["wine_type"] for w in wines[: len(types)]} == types  # one of each type first
    for wine_type in types:
        of_type = [w["price_rub"] for w in wines if w["wine_type"] == wine_type]
        closeness = [abs(math.log(p / 2000)) for p in of_type]
        assert closeness == sorted(closeness), wine_type


def test_get_list_limit_and_filters(catalog_db, shipped_wines):
    assert ok(catalog_db, "get_list", limit=3)["found"] == 3
    assert ok(catalog_db, "get_list", limit=500)["found"] == min(50, len(shipped_wines))
    reds = ok(catalog_db, "get_list", wine_type="red", limit=50)["wines"]
    assert len(reds) == sum(w["wine_type"] == "red" for w in shipped_wines)
    assert {w["wine_type"] for w in reds} == {"red"}
    cheap = ok(catalog_db, "get_list", price_max=1000, limit=50)["wines"]
    assert cheap and all(w["price_rub"] <= 1000 for w in cheap)
    assert len(cheap) == sum(w["price_rub"] <= 1000 for w in shipped_wines)


def test_get_list_exclude(catalog_db):
    first = ok(catalog_db, "get_list", limit=5)["wines"]
    shown = [w["id"] for w in first]
    rest = ok(catalog_db, "get_list", limit=50, exclude_ids=shown)["wines"]
    assert not set(shown) & {w["id"] for w in rest}


def test_get_list_bad_arguments(catalog_db):
    assert "limit" in error(catalog_db, "get_list", limit="many")
    assert "exclude_ids" in error(catalog_db, "get_list", exclude_ids=["nope"])


# ---------------------------------------------------------------- history


def test_save_turn_and_load_history(fresh_db):
    wine_ids = some_ids(fresh_db, 2)
    saved = ok(
        fresh_db,
        "save_turn",
        chat_id=CHAT,
        user_id=USER,
        update_id=1001,
        user_text="красное к стейку",
        answer_text="Вот что я нашёл.\n\nMalbec — к стейку.",
        wine_ids=wine_ids,
        response_type="recommendation",
    )
    assert saved["saved"] is True and saved["assistant_message_id"] > saved["user_message_id"]
    history = ok(fresh_db, "load_history", chat_id=CHAT)["messages"]
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "красное к стейку"),
        ("assistant", "Вот что я нашёл.\n\nMalbec — к стейку."),  # paragraphs kept
    ]
    assert history[1]["wine_ids"] == wine_ids and history[1]["response_type"] == "recommendation"
    assert history[0]["wine_ids"] == [] and history[0]["response_type"] is None
    assert all(m["created_at"] for m in history)
    assert ok(fresh_db, "load_history", chat_id=CHAT + 1) == {"messages": []}


def test_save_turn_is_idempotent_on_update_id(fresh_db):
    first = ok(fresh_db, "save_turn", chat_id=CHAT, update_id=42, user_text="привет", answer_text="Здравствуйте!")
    again = ok(fresh_db, "save_turn", chat_id=CHAT, update_id=42, user_text="привет", answer_text="Здравствуйте!")
    assert again == first
    assert len(ok(fresh_db, "load_history", chat_id=CHAT)["messages"]) == 2
    # the same update_id in another chat is another turn
    ok(fresh_db, "save_turn", chat_id=CHAT + 1, update_id=42, user_text="привет", answer_text="Здравствуйте!")
    assert len(ok(fresh_db, "load_history", chat_id=CHAT + 1)["messages"]) == 2
    # without an update_id every call is a new turn
    for _ in range(2):
        ok(fresh_db, "save_turn", chat_id=CHAT, user_text="ещё", answer_text="Пожалуйста.")
    assert len(ok(fresh_db, "load_history", chat_id=CHAT)["messages"]) == 6


def test_load_history_order_and_limit(fresh_db):
    for turn in range(6):
        ok(fresh_db, "save_turn", chat_id=CHAT, update_id=turn, user_text=f"вопрос {turn}", answer_text=f"ответ {turn}")
    recent = ok(fresh_db, "load_history", chat_id=CHAT, limit=4)["messages"]
    assert [m["content"] for m in recent] == ["вопрос 4", "ответ 4", "вопрос 5", "ответ 5"]
    default = ok(fresh_db, "load_history", chat_id=CHAT)["messages"]
    assert len(default) == 10 and default[-1]["content"] == "ответ 5"
    ids = [m["id"] for m in default]
    assert ids == sorted(ids)


def test_history_text_limit_is_2000_characters(fresh_db):
    ok(fresh_db, "save_turn", chat_id=CHAT, user_text="a" * 2000, answer_text="б" * 2000)
    assert "2000" in error(fresh_db, "save_turn", chat_id=CHAT, user_text="a" * 2001, answer_text="ok")
    assert "2000" in error(fresh_db, "save_turn", chat_id=CHAT, user_text="ok", answer_text="б" * 2001)
    messages = ok(fresh_db, "load_history", chat_id=CHAT)["messages"]
    assert [len(m["content"]) for m in messages] == [2000, 2000]


def test_history_limit_holds_in_the_database_too(fresh_db):
    import psycopg

    with (
        fresh_db.connection() as conn,
        pytest.raises(psycopg.errors.CheckViolation, match="ck_messages_content_length"),
    ):
        conn.execute("INSERT INTO messages (chat_id, role, content) VALUES (1, 'user', %s)", ("x" * 2001,))


@pytest.mark.parametrize(
    "arguments,fragment",
    [
        ({"user_text": "a", "answer_text": "b"}, "chat_id"),
        ({"chat_id": "1", "user_text": "a", "answer_text": "b"}, "chat_id"),
        ({"chat_id": True, "user_text": "a", "answer_text": "b"}, "chat_id"),
        ({"chat_id": 2**60, "user_text": "a", "answer_text": "b"}, "chat_id"),
        ({"chat_id": 1, "answer_text": "b"}, "user_text"),
        ({"chat_id": 1, "user_text": "  ", "answer_text": "b"}, "user_text"),
        ({"chat_id": 1, "user_text": "a", "answer_text": "b", "response_type": "poem"}, "response_type"),
        ({"chat_id": 1, "user_text": "a", "answer_text": "b", "wine_ids": ["x"]}, "wine_ids"),
        ({"chat_id": 1, "user_text": "a", "answer_text": "b", "update_id": 1.5}, "update_id"),
    ],
)
def test_save_turn_bad_arguments_write_nothing(fresh_db, arguments, fragment):
    before = fingerprint(fresh_db)
    assert fragment in error(fresh_db, "save_turn", **arguments)
    assert fingerprint(fresh_db) == before


def test_reset_history_archives(fresh_db):
    for turn in range(3):
        ok(fresh_db, "save_turn", chat_id=CHAT, update_id=turn, user_text="q", answer_text="a")
    ok(fresh_db, "save_turn", chat_id=CHAT + 5, update_id=1, user_text="other chat", answer_text="a")
    assert ok(fresh_db, "reset_history", chat_id=CHAT) == {"archived": 6}
    assert ok(fresh_db, "load_history", chat_id=CHAT) == {"messages": []}
    assert len(ok(fresh_db, "load_history", chat_id=CHAT + 5)["messages"]) == 2  # other chats untouched
    with fresh_db.connection() as conn:  # archived, not deleted
        assert conn.execute("SELECT count(*) FROM messages WHERE chat_id = %s AND archived", (CHAT,)).fetchone()[0] == 6
    assert ok(fresh_db, "reset_history", chat_id=CHAT) == {"archived": 0}
    # a new conversation starts clean; a redelivered old update is not resurrected
    ok(fresh_db, "save_turn", chat_id=CHAT, update_id=99, user_text="новый", answer_text="старт")
    ok(fresh_db, "save_turn", chat_id=CHAT, update_id=1, user_text="q", answer_text="a")
    assert [m["content"] for m in ok(fresh_db, "load_history", chat_id=CHAT)["messages"]] == ["новый", "старт"]


# ---------------------------------------------------------------- users


def test_upsert_user_creates_then_updates_and_merges_profile(fresh_db):
    created = ok(
        fresh_db,
        "upsert_user",
        telegram_user_id=USER,
        chat_id=CHAT,
        username="anna",
        first_name="Анна",
        language_code="ru",
        profile={"likes": ["red"]},
    )
    assert created["created"] is True
    assert created["user"] == {
        "telegram_user_id": USER,
        "chat_id": CHAT,
        "username": "anna",
        "first_name": "Анна",
        "profile": {"likes": ["red"]},
        "is_active": True,
    }
    updated = ok(
        fresh_db,
        "upsert_user",
        telegram_user_id=USER,
        chat_id=CHAT + 1,
        username="anna_v",
        first_name="Анна",
        profile={"budget": 2000},
    )
    assert updated["created"] is False
    assert updated["user"]["chat_id"] == CHAT + 1 and updated["user"]["username"] == "anna_v"
    assert updated["user"]["profile"] == {"likes": ["red"], "budget": 2000}
    # a later value for the same key wins; no profile keeps the profile
    again = ok(fresh_db, "upsert_user", telegram_user_id=USER, chat_id=CHAT, profile={"budget": 3000})
    assert again["user"]["profile"] == {"likes": ["red"], "budget": 3000}
    assert (
        ok(fresh_db, "upsert_user", telegram_user_id=USER, chat_id=CHAT)["user"]["profile"] == again["user"]["profile"]
    )
    with fresh_db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM users").fetchone()[0] == 1


@pytest.mark.parametrize(
    "arguments,fragment",
    [
        ({"chat_id": CHAT}, "telegram_user_id"),
        ({"telegram_user_id": USER}, "chat_id"),
        ({"telegram_user_id": "5", "chat_id": CHAT}, "telegram_user_id"),
        ({"telegram_user_id": USER, "chat_id": CHAT, "profile": ["x"]}, "profile"),
        ({"telegram_user_id": USER, "chat_id": CHAT, "profile": "{}"}, "profile"),
        ({"telegram_user_id": USER, "chat_id": CHAT, "username": 5}, "username"),
        ({"telegram_user_id": USER, "chat_id": CHAT, "username": "x" * 257}, "username"),
    ],
)
def test_upsert_user_bad_arguments(fresh_db, arguments, fragment):
    before = fingerprint(fresh_db)
    assert fragment in error(fresh_db, "upsert_user", **arguments)
    assert fingerprint(fresh_db) == before


def test_hostile_user_names_are_stored_literally(fresh_db):
    wines_before = fingerprint(fresh_db)[0]
    name = "'; DROP TABLE wines; --"
    user = ok(
        fresh_db,
        "upsert_user",
        telegram_user_id=USER,
        chat_id=CHAT,
        username=name,
        first_name="%' OR 1=1 --",
        profile={"note": "\\ _%"},
    )["user"]
    assert user["username"] == name and user["first_name"] == "%' OR 1=1 --" and user["profile"] == {"note": "\\ _%"}
    assert fingerprint(fresh_db)[0] == wines_before


def test_set_user_active(fresh_db):
    ok(fresh_db, "upsert_user", telegram_user_id=USER, chat_id=CHAT)
    assert ok(fresh_db, "set_user_active", telegram_user_id=USER, active=False) == {"updated": 1}
    with fresh_db.connection() as conn:
        assert conn.execute("SELECT is_active FROM users WHERE telegram_user_id = %s", (USER,)).fetchone()[0] is False
    assert ok(fresh_db, "set_user_active", chat_id=CHAT, active=True) == {"updated": 1}
    assert ok(fresh_db, "set_user_active", telegram_user_id=USER + 1, active=False) == {"updated": 0}
    # a blocked user who comes back is active again
    ok(fresh_db, "set_user_active", telegram_user_id=USER, active=False)
    assert ok(fresh_db, "upsert_user", telegram_user_id=USER, chat_id=CHAT)["user"]["is_active"] is True
    assert "active" in error(fresh_db, "set_user_active", telegram_user_id=USER, active="false")
    assert "telegram_user_id or chat_id" in error(fresh_db, "set_user_active", active=False)


def _chats(db, user: int) -> dict[int, bool]:
    return {c["chat_id"]: c["is_active"] for c in ok(db, "chat_state", telegram_user_id=user)["chats"]}


def test_active_state_is_kept_per_user_and_chat(fresh_db):
    group = -1001234567
    ok(fresh_db, "upsert_user", telegram_user_id=USER, chat_id=USER)  # writes privately
    ok(fresh_db, "upsert_user", telegram_user_id=USER, chat_id=group)  # and in a group
    ok(fresh_db, "upsert_user", telegram_user_id=USER + 1, chat_id=group)  # with someone else
    assert _chats(fresh_db, USER) == {group: True, USER: True}

    # A private block changes only the private chat: the group still works.
    assert ok(fresh_db, "set_user_active", chat_id=USER, active=False) == {"updated": 1}
    assert _chats(fresh_db, USER) == {group: True, USER: False}
    with fresh_db.connection() as conn:
        assert conn.execute("SELECT is_active FROM users WHERE telegram_user_id = %s", (USER,)).fetchone()[0]

    # Removed from the group: every member's row of that group, and nothing else.
    assert ok(fresh_db, "set_user_active", chat_id=group, active=False) == {"updated": 2}
    assert _chats(fresh_db, USER) == {group: False, USER: False}
    assert _chats(fresh_db, USER + 1) == {group: False}
    with fresh_db.connection() as conn:
        assert not conn.execute("SELECT is_active FROM users WHERE telegram_user_id = %s", (USER,)).fetchone()[0]

    # An unblock of the private chat leaves the group as it is.
    ok(fresh_db, "set_user_active", chat_id=USER, active=True)
    assert _chats(fresh_db, USER) == {group: False, USER: True}
    # One (user, chat) pair on its own.
    ok(fresh_db, "set_user_active", telegram_user_id=USER + 1, chat_id=group, active=True)
    assert _chats(fresh_db, USER + 1) == {group: True} and _chats(fresh_db, USER)[group] is False


# ---------------------------------------------------------------- photos


def test_cache_photo(fresh_db):
    wine_id = some_ids(fresh_db, 1)[0]
    assert ok(fresh_db, "cache_photo", wine_id=wine_id, file_id="AgACAgIAAxkBAAIB") == {"updated": 1}
    assert ok(fresh_db, "get_wines", ids=[wine_id])["wines"][0]["telegram_file_id"] == "AgACAgIAAxkBAAIB"
    assert ok(fresh_db, "cache_photo", wine_id=wine_id, file_id="newer") == {"updated": 1}
    assert ok(fresh_db, "get_wines", ids=[wine_id])["wines"][0]["telegram_file_id"] == "newer"
    assert ok(fresh_db, "cache_photo", wine_id=UNKNOWN_ID, file_id="x") == {"updated": 0}
    assert "file_id" in error(fresh_db, "cache_photo", wine_id=wine_id)
    assert "file_id" in error(fresh_db, "cache_photo", wine_id=wine_id, file_id="x" * 257)
    assert "wine_id" in error(fresh_db, "cache_photo", wine_id="nope", file_id="x")
    assert "wine_id" in error(fresh_db, "cache_photo", file_id="x")


# ---------------------------------------------------------------- feedback


def _feedback_rows(db):
    with db.connection() as conn:
        return conn.execute(
            "SELECT chat_id, user_id, message_id, wine_id::text, rating FROM feedback ORDER BY id"
        ).fetchall()


def test_save_feedback_vote_and_change_of_mind(fresh_db):
    saved = ok(fresh_db, "save_turn", chat_id=CHAT, update_id=7, user_text="q", answer_text="a")
    message_id = saved["assistant_message_id"]
    wine_id = some_ids(fresh_db, 1)[0]
    assert ok(
        fresh_db, "save_feedback", chat_id=CHAT, user_id=USER, message_id=message_id, wine_id=wine_id, rating=1
    ) == {"saved": True, "rating": 1, "previous_rating": None, "changed": False}
    changed = ok(
        fresh_db, "save_feedback", chat_id=CHAT, user_id=USER, message_id=message_id, wine_id=wine_id, rating=-1
    )
    assert changed == {"saved": True, "rating": -1, "previous_rating": 1, "changed": True}
    assert _feedback_rows(fresh_db) == [(CHAT, USER, message_id, wine_id, -1)]  # one vote per user per answer
    with fresh_db.connection() as conn:  # the stored vote says it was changed: the last press wins
        row = conn.execute("SELECT rating, previous_rating, presses, changed_at IS NOT NULL FROM feedback").fetchone()
    assert row == (-1, 1, 2, True)
    again = ok(fresh_db, "save_feedback", chat_id=CHAT, user_id=USER, message_id=message_id, rating=-1)
    assert again["changed"] is False and again["previous_rating"] == -1
    ok(fresh_db, "save_feedback", chat_id=CHAT, user_id=USER + 1, message_id=message_id, rating=1)
    assert len(_feedback_rows(fresh_db)) == 2


def test_save_feedback_stale_message_keeps_the_vote(fresh_db):
    saved = ok(fresh_db, "save_turn", chat_id=CHAT, update_id=8, user_text="q", answer_text="a")
    ok(fresh_db, "save_feedback", chat_id=CHAT, user_id=USER, message_id=987654321, rating=1)
    # a message of another chat is stale for this one too
    ok(fresh_db, "save_feedback", chat_id=CHAT + 1, user_id=USER, message_id=saved["assistant_message_id"], rating=-1)
    ok(fresh_db, "save_feedback", chat_id=CHAT, user_id=USER, rating=1)  # no message at all
    assert _feedback_rows(fresh_db) == [
        (CHAT, USER, None, None, 1),
        (CHAT + 1, USER, None, None, -1),
        (CHAT, USER, None, None, 1),
    ]


@pytest.mark.parametrize(
    "arguments,fragment",
    [
        ({"rating": 0}, "rating"),
        ({"rating": 2}, "rating"),
        ({"rating": True}, "rating"),
        ({"rating": "1"}, "rating"),
        ({"rating": 1, "message_id": 0}, "message_id"),
        ({"rating": 1, "message_id": "5"}, "message_id"),
        ({"rating": 1, "wine_id": "nope"}, "wine_id"),
        ({"rating": 1, "user_id": None}, "user_id"),
    ],
)
def test_save_feedback_bad_arguments(fresh_db, arguments, fragment):
    before = fingerprint(fresh_db)
    full = {"chat_id": CHAT, "user_id": USER, **arguments}
    assert fragment in error(fresh_db, "save_feedback", **{k: v for k, v in full.items() if v is not None})
    assert fingerprint(fresh_db) == before


def test_feedback_for_an_unknown_wine_never_raises(fresh_db):
    result = call(fresh_db, "save_feedback", chat_id=CHAT, user_id=USER, wine_id=UNKNOWN_ID, rating=1)
    assert result.get("saved") is True or set(result) == {"error"}


def test_feedback_for_an_unknown_wine_keeps_the_vote(fresh_db):
    assert ok(fresh_db, "save_feedback", chat_id=CHAT, user_id=USER, wine_id=UNKNOWN_ID, rating=1)["saved"] is True
    assert [row[4] for row in _feedback_rows(fresh_db)] == [1]


# ---------------------------------------------------------------- stats and read-only tools


def test_catalog_stats(catalog_db, shipped_wines, empty_db):
    stats = ok(catalog_db, "catalog_stats")
    assert stats["wines"] == stats["available"] == len(shipped_wines) and stats["unavailable"] == 0
    assert stats["embedding_models"] == {"local-ngram-hash-v4": len(shipped_wines)}
    assert stats["unknown_country"] == 0  # the language layer knows every shipped country
    assert sum(stats["by_type"].values()) == sum(stats["by_country"].values()) == len(shipped_wines)
    prices = sorted(w["price_rub"] for w in shipped_wines)
    assert stats["price_rub"]["min"] == prices[0] and stats["price_rub"]["max"] == prices[-1]
    empty = ok(empty_db, "catalog_stats")
    assert all(counts == {"given": 0, "inferred": 0, "unknown": 0} for counts in empty.pop("coverage").values())
    assert empty == {
        "wines": 0,
        "available": 0,
        "unavailable": 0,
        "with_photo": 0,
        "unknown_country": 0,
        "by_type": {},
        "by_country": {},
        "price_rub": None,
        "embedding_models": {},
    }


def test_read_only_tools_change_nothing(fresh_db):
    from sommelier.embeddings.local import LocalHashingEmbeddings

    ok(fresh_db, "save_turn", chat_id=CHAT, update_id=1, user_text="q", answer_text="a")
    ok(fresh_db, "upsert_user", telegram_user_id=USER, chat_id=CHAT)
    before = fingerprint(fresh_db)
    ids = some_ids(fresh_db, 3)
    vector = LocalHashingEmbeddings().embed(["лёгкое белое"])[0]
    for tool, arguments in [
        ("search_wines", {"wine_type": "red", "food_pairing": "мясо", "price_max": 5000}),
        (
            "semantic_search",
            {
                "query": "лёгкое белое",
                "embedding": vector,
                "embedding_model": "local-ngram-hash-v4",
                "wine_type": "white",
                "price_max": 3000,
            },
        ),
        ("semantic_search", {"query": "x", "embedding": vector, "embedding_model": "another-model"}),
        ("get_wines", {"ids": ids + [UNKNOWN_ID]}),
        ("get_list", {"limit": 50}),
        ("load_history", {"chat_id": CHAT}),
        ("catalog_stats", {}),
        ("export_wines", {}),
        ("embedding_texts", {}),
    ]:
        call(fresh_db, tool, **arguments)
    assert fingerprint(fresh_db) == before
