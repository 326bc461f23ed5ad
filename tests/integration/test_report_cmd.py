"""The weekly report from a seeded week of turns and votes: `sommelier report` writes a PNG chart and prints
the summary; `sommelier maintenance` applies the retention period."""

from __future__ import annotations

import io

import psycopg
import pytest
from PIL import Image
from sommelier.domain.shop import ReportData
from sommelier.domain.wire import from_wire
from sommelier.shop.report import ReportError, build_report, parse_since
from sommelier.toolfn.handler import handle
from sommelier_dev.cli.main import main

ANNA, BORIS, VERA = 8_100_001, 8_100_002, 8_100_003


@pytest.fixture
def week(monkeypatch, fresh_db, tmp_path):
    """Seven days of questions from three customers, with votes, one LLM fallback and two unmet requests."""
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path / "state"))

    def call(tool, **arguments):
        result = handle({"tool": tool, "arguments": arguments}, fresh_db)
        assert "error" not in result, result
        return result

    with psycopg.connect(fresh_db.conninfo) as conn:
        reds = [r[0] for r in conn.execute("SELECT id::text FROM wines WHERE wine_type = 'red' ORDER BY name LIMIT 2")]
        white = conn.execute("SELECT id::text FROM wines WHERE wine_type = 'white' ORDER BY name LIMIT 1").fetchone()[0]
    turns = [
        # (user, days ago, text, wines shown, mode, prompt tokens, completion tokens)
        (ANNA, 6, "красное сухое к стейку до 2000", reds, "llm", 3000, 400),
        (ANNA, 5, "красное пино нуар к утке около 3 тысяч", reds[:1], "llm", 3000, 400),
        (BORIS, 4, "белое к рыбе до 1500", [white], "offline_fallback", 0, 0),
        (BORIS, 3, "вино из Японии", [], "llm", 2000, 200),
        (VERA, 2, "вино из Японии", [], "llm", 2000, 200),
        (VERA, 1, "красное к стейку до 2000", reds[1:], "llm", 3000, 400),
        (VERA, 9, "белое к рыбе", [white], "llm", 3000, 400),  # older than the week: not counted
    ]
    answers = []
    for update_id, (user, days, text, shown, mode, prompt, completion) in enumerate(turns, start=1):
        saved = call(
            "save_turn",
            chat_id=user,
            user_id=user,
            update_id=update_id,
            user_text=text,
            answer_text="ответ",
            wine_ids=shown,
            response_type="recommendation" if shown else "informational",
            stats={"mode": mode, "llm_calls": 2, "prompt_tokens": prompt, "completion_tokens": completion},
        )
        answers.append(saved["assistant_message_id"])
        with psycopg.connect(fresh_db.conninfo) as conn:
            conn.execute(
                "UPDATE messages SET created_at = now() - make_interval(days => %s) WHERE update_id = %s",
                (days, update_id),
            )
            conn.execute(
                "UPDATE turn_stats SET created_at = now() - make_interval(days => %s)"
                " WHERE id = (SELECT max(id) FROM turn_stats)",
                (days,),
            )
    call("save_feedback", chat_id=ANNA, user_id=ANNA, message_id=answers[0], rating=1)  # both reds 👍
    call("save_feedback", chat_id=BORIS, user_id=BORIS, message_id=answers[2], rating=-1)  # the white 👎
    call("save_feedback", chat_id=VERA, user_id=VERA, message_id=answers[5], rating=1)  # the second red 👍
    yield {"reds": reds, "white": white}


def test_report_writes_a_png_chart_and_a_text_summary(week, tmp_path, capsys):
    out = tmp_path / "out" / "report.png"
    assert main(["report", "--since", "7d", "--out", str(out)]) == 0
    image = Image.open(io.BytesIO(out.read_bytes()))
    assert image.format == "PNG" and image.width >= 800 and image.height >= 600
    assert len(set(image.convert("L").get_flattened_data())) > 10, "a drawn chart, not a blank image"
    text = capsys.readouterr().out
    assert "Вопросов: 6, покупателей: 3." in text
    assert "красное — 3" in text and "белое — 1" in text
    assert "стейк — 2" in text and "рыба — 1" in text and "утка — 1" in text
    assert "1 000–2 000 ₽ — 3" in text and "2 000–3 000 ₽ — 1" in text and "до 1 000 ₽" not in text
    assert "«вино из японии» — 2" in text
    assert "Сорта: Пино Нуар — 1." in text
    # 👍 for both reds of Anna's answer and Vera's red; 👎 for Boris's white.
    assert text.count("👍 1 / 👎 0") + text.count("👍 2 / 👎 0") == 2 and "👍 0 / 👎 1" in text
    # One of the six turns fell back from the LLM; tokens 13 000 prompt + 1 600 completion at $3/$15 per million.
    assert "17%" in text and "из 6" in text
    cost = (13_000 * 3 + 1_600 * 15) / 1_000_000
    assert f"${cost / 6 * 1000:.2f} на 1 000 вопросов" in text
    assert f"≈ ${cost / 6:.4f} за вопрос" in text and "в неделю" in text


def test_report_counts_votes_per_wine(week, fresh_db):
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    data = handle(
        {
            "tool": "report_data",
            "arguments": {"since": (now - timedelta(days=7)).isoformat(), "until": now.isoformat()},
        },
        fresh_db,
    )
    report = build_report(from_wire(ReportData, data), prices=(3.0, 15.0))
    votes = {v.wine_id: (v.up, v.down) for v in report.votes}
    assert votes == {week["reds"][0]: (1, 0), week["reds"][1]: (2, 0), week["white"]: (0, 1)}
    assert report.fallback_turns == 1 and report.llm_turns == 6


def test_report_refuses_a_bad_period(week, capsys):
    assert main(["report", "--since", "seven days", "--out", "x.png"]) == 1
    assert "--since" in capsys.readouterr().err
    with pytest.raises(ReportError):
        parse_since("0h")


def test_maintenance_deletes_messages_older_than_the_retention_period(week, fresh_db, monkeypatch):
    monkeypatch.setenv("MESSAGE_RETENTION_DAYS", "5")
    assert main(["maintenance"]) == 0
    with psycopg.connect(fresh_db.conninfo) as conn:
        left = conn.execute("SELECT count(*), min(created_at) > now() - interval '5 days' FROM messages").fetchone()
    assert left == (8, True)  # 4 turns younger than 5 days, 2 messages each
    assert main(["maintenance", "--retention-days", "0"]) == 1
