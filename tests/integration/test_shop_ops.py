"""The shop's data operations (issue 19) through the tool function's handle(): age answers, /forget,
retention, wine cards for deep links, and the weekly report's figures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
from sommelier.toolfn.handler import handle

USER = 4_100_000_001
OTHER = 4_100_000_002
GROUP = -1_004_100_000


def ok(db, tool, **arguments):
    result = handle({"tool": tool, "arguments": arguments}, db)
    assert "error" not in result, result
    return result


def error(db, tool, **arguments) -> str:
    result = handle({"tool": tool, "arguments": arguments}, db)
    assert "error" in result, result
    return result["error"]


def wine_ids(db, count):
    return [w["id"] for w in ok(db, "search_wines", limit=count)["wines"]]


def talk(db, user, chat, update_id, text, wines, mode="llm", tokens=(1000, 200)):
    saved = ok(
        db,
        "save_turn",
        chat_id=chat,
        user_id=user,
        update_id=update_id,
        user_text=text,
        answer_text="Вот что нашлось" if wines else "Ничего не нашлось",
        wine_ids=wines,
        response_type="recommendation" if wines else "informational",
        stats={"mode": mode, "llm_calls": 2, "prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
    )
    return saved["assistant_message_id"]


def rows_mentioning(db, value: int) -> dict[str, int]:
    """Every row of every table in public with any integer column equal to value."""
    found = {}
    with psycopg.connect(db.conninfo) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND data_type IN ('bigint', 'integer')"
        ).fetchall()
        for table, column in columns:
            count = conn.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}" = %s', (value,)).fetchone()[0]
            if count:
                found[f"{table}.{column}"] = count
    return found


def test_forget_leaves_no_row_with_the_users_id_in_any_table(fresh_db):
    ids = wine_ids(fresh_db, 3)
    for user, chat in ((USER, USER), (OTHER, OTHER), (USER, GROUP), (OTHER, GROUP)):
        ok(fresh_db, "upsert_user", telegram_user_id=user, chat_id=chat, first_name="Анна", profile={"любит": "риоху"})
        ok(fresh_db, "save_age_answer", telegram_user_id=user, is_adult=True)
    answer = talk(fresh_db, USER, USER, 1, "красное к стейку", ids[:2])
    group_answer = talk(fresh_db, USER, GROUP, 2, "игристое на праздник", ids[2:])
    other_answer = talk(fresh_db, OTHER, GROUP, 3, "белое к рыбе", ids[:1])
    ok(fresh_db, "save_feedback", chat_id=USER, user_id=USER, message_id=answer, rating=1)
    ok(fresh_db, "save_feedback", chat_id=GROUP, user_id=USER, message_id=group_answer, rating=-1)
    ok(fresh_db, "save_feedback", chat_id=GROUP, user_id=OTHER, message_id=other_answer, rating=1)
    assert rows_mentioning(fresh_db, USER)  # the check can see the user

    result = ok(fresh_db, "forget_user", telegram_user_id=USER)

    assert rows_mentioning(fresh_db, USER) == {}
    assert result["deleted"]["messages"] == 4 and result["deleted"]["feedback"] == 2
    # The other customer keeps everything, and the aggregate turn counts stay (they carry no user id).
    assert rows_mentioning(fresh_db, OTHER)
    assert ok(fresh_db, "get_age_answer", telegram_user_id=OTHER)["is_adult"] is True
    with psycopg.connect(fresh_db.conninfo) as conn:
        assert conn.execute("SELECT count(*) FROM turn_stats").fetchone()[0] == 3


def test_age_answers_are_stored_per_user_and_can_change(fresh_db):
    assert ok(fresh_db, "get_age_answer", telegram_user_id=USER)["is_adult"] is None
    ok(fresh_db, "save_age_answer", telegram_user_id=USER, is_adult=False)
    assert ok(fresh_db, "get_age_answer", telegram_user_id=USER)["is_adult"] is False
    ok(fresh_db, "save_age_answer", telegram_user_id=USER, is_adult=True)
    assert ok(fresh_db, "get_age_answer", telegram_user_id=USER)["is_adult"] is True
    assert "is_adult" in error(fresh_db, "save_age_answer", telegram_user_id=USER, is_adult="да")


def test_retention_deletes_only_messages_older_than_the_period(fresh_db):
    ids = wine_ids(fresh_db, 1)
    old = talk(fresh_db, USER, USER, 10, "старый вопрос", ids)
    talk(fresh_db, USER, USER, 11, "новый вопрос", ids)
    ok(fresh_db, "save_feedback", chat_id=USER, user_id=USER, message_id=old, rating=1)
    with psycopg.connect(fresh_db.conninfo) as conn:
        conn.execute("UPDATE messages SET created_at = now() - interval '200 days' WHERE update_id = 10")
    assert ok(fresh_db, "purge_old_messages", days=180)["deleted"] == 2
    with psycopg.connect(fresh_db.conninfo) as conn:
        assert [r[0] for r in conn.execute("SELECT content FROM messages WHERE role = 'user'")] == ["новый вопрос"]
        # The vote stays counted, unlinked from the deleted answer.
        assert conn.execute("SELECT count(*) FROM feedback WHERE message_id IS NULL").fetchone()[0] == 1
    assert "days" in error(fresh_db, "purge_old_messages", days=0)


def test_wine_card_by_id_has_two_similar_wines(catalog_db):
    wine = ok(catalog_db, "search_wines", wine_type="red", limit=1)["wines"][0]
    card = ok(catalog_db, "wine_card", ref=wine["id"])
    assert card["wine"]["id"] == wine["id"]
    assert len(card["similar"]) == 2 and wine["id"] not in {w["id"] for w in card["similar"]}
    assert card["wine"]["food_pairings"]


def test_unknown_wine_card_offers_the_closest_alternatives(catalog_db):
    card = ok(catalog_db, "wine_card", ref="riesling-9999")
    assert card["wine"] is None
    assert len(card["alternatives"]) == 3
    assert "Riesling" in card["alternatives"][0]["name"] or "Рислинг" in card["alternatives"][0]["name"]


def test_find_wines_lists_missing_refs(catalog_db):
    ids = wine_ids(catalog_db, 2)
    result = ok(catalog_db, "find_wines", refs=[ids[1], "no-such-sku", ids[0]])
    assert [(w["ref"], w["wine"]["id"]) for w in result["wines"]] == [(ids[1], ids[1]), (ids[0], ids[0])]
    assert result["missing"] == ["no-such-sku"]


def test_report_data_counts_a_week(fresh_db):
    ids = wine_ids(fresh_db, 3)
    first = talk(fresh_db, USER, USER, 20, "красное к стейку до 2000", ids[:2])
    talk(fresh_db, OTHER, OTHER, 21, "вино из Японии", [], mode="offline_fallback", tokens=(0, 0))
    ok(fresh_db, "save_feedback", chat_id=USER, user_id=USER, message_id=first, rating=1)
    now = datetime.now(UTC)
    data = ok(
        fresh_db,
        "report_data",
        since=(now - timedelta(days=7)).isoformat(),
        until=(now + timedelta(minutes=1)).isoformat(),
    )
    assert data["customers"] == 2
    assert {m["mode"]: m["turns"] for m in data["modes"]} == {"llm": 1, "offline_fallback": 1}
    assert sorted((v["wine_id"], v["up"], v["down"]) for v in data["votes"]) == sorted((i, 1, 0) for i in ids[:2])
    assert {(q["text"], q["wines_shown"]) for q in data["queries"]} == {
        ("красное к стейку до 2000", 2),
        ("вино из Японии", 0),
    }
    assert "time zone" in error(fresh_db, "report_data", since="2026-01-01", until="2026-01-08")


def test_wine_card_by_sku_and_a_sold_out_wine(fresh_db):
    with psycopg.connect(fresh_db.conninfo) as conn:
        wine_id, name = conn.execute("SELECT id::text, name FROM wines ORDER BY name LIMIT 1").fetchone()
        conn.execute("UPDATE wines SET sku = 'AB-1234' WHERE id = %s", (wine_id,))
    assert ok(fresh_db, "wine_card", ref="AB-1234")["wine"]["id"] == wine_id
    assert ok(fresh_db, "find_wines", refs=["AB-1234"])["wines"][0]["wine"]["id"] == wine_id
    with psycopg.connect(fresh_db.conninfo) as conn:
        conn.execute("UPDATE wines SET available = false WHERE id = %s", (wine_id,))
    card = ok(fresh_db, "wine_card", ref="AB-1234")
    assert card["wine"] is None and card["unavailable"]["name"] == name
    assert len(card["alternatives"]) == 3 and all(w["available"] for w in card["alternatives"])
    # A sold-out wine is never offered as similar to another one.
    other = ok(fresh_db, "search_wines", limit=1)["wines"][0]["id"]
    assert wine_id not in {w["id"] for w in ok(fresh_db, "wine_card", ref=other)["similar"]}
