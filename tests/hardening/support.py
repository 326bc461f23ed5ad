"""Shared wiring for the hardening tests (bad input, faults, load, security).

The update and event builders (tests/fakes/telegram_updates.py) and the bot harness
(tests/bot_harness.py) are shared with the e2e tests. Real adapters everywhere but the data: the fake Bot API
and the fake OpenAI server over loopback, the in-memory data ports, and a real PostgreSQL where the test is
about the database (its faults, its limits, its roles).
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests import bot_harness
from tests.bot_harness import deliver
from tests.fakes.openai_server import reply
from tests.fakes.provider_behaviours import prompt_rows, with_refs_as_ids
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.telegram_updates import (
    TEST_BOT,
    TEST_CHAT,
    TEST_WEBHOOK_SECRET,
    ListSink,
    private_chat,
    text_update,
    user,
    webhook_event,
    webhook_function,
)

# What the hardening tests import from here.
__all__ = [
    "BOT",
    "CHAT",
    "CORPORA",
    "HARDENING",
    "ListSink",
    "SECRET",
    "TRACEBACK",
    "catalogue_in_prompt",
    "deliver",
    "make_bot",
    "private_chat",
    "record_figure",
    "shown_texts",
    "text_update",
    "tool_results",
    "user",
    "webhook_event",
    "webhook_function",
    "json_strategies",
]


def json_strategies(*, max_text: int, max_key: int, max_leaves: int):
    """(scalars, values): any JSON scalar (NaN, infinities and huge integers included), and any JSON
    value built from them, nested lists and objects."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=True, allow_infinity=True)
        | st.text(max_size=max_text)
    )
    values = st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=max_key), children, max_size=4)
        ),
        max_leaves=max_leaves,
    )
    return scalars, values


SECRET = TEST_WEBHOOK_SECRET
BOT = TEST_BOT
CHAT = TEST_CHAT
CORPORA = Path(__file__).resolve().parent / "corpora"

# Deterministic and bounded: CI runs the same examples every time, within the ~3 minute budget.
HARDENING = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


# Hardening runs many turns per chat: the rate limit is out of the way unless a test sets one.
make_bot = functools.partial(bot_harness.make_bot, rate=10_000)


def shown_texts(telegram: FakeTelegram, chat_id: int | None = None) -> list[str]:
    """What the user sees: texts and captions after Telegram parsed the HTML."""
    out = []
    for call in telegram.sent_messages(chat_id):
        result = call.response.get("result") or {}
        out.append(result.get("text") or result.get("caption") or "")
    return out


def said(body: dict) -> str:
    """The customer's message inside the agent's user prompt."""
    prompt = body["messages"][1]["content"]
    return prompt.rsplit("<<<\n", 1)[1].split("\n>>>", 1)[0]


def echo_answer(body: dict):
    """Fake LLM: an informational answer quoting the customer's message (shows order and content)."""
    return reply(
        json.dumps(
            {
                "response_type": "informational",
                "intro": f"Ответ на: {said(body)}",
                "wines": [],
                "closing": "Что-нибудь ещё?",
                "guard_type": None,
            },
            ensure_ascii=False,
        )
    )


def tool_results(body: dict) -> list[dict]:
    return [with_refs_as_ids(json.loads(m["content"])) for m in body.get("messages", []) if m.get("role") == "tool"]


def catalogue_in_prompt(body: dict) -> list[dict]:
    """The wines of the no-tools fallback prompt (a fenced JSON row a line after the catalogue note)."""
    return prompt_rows(body["messages"][1]["content"], "## Каталог")


TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|\bpsycopg\.|\bError:\s")


def record_figure(name: str, value: Any) -> None:
    """Measured figures for RELIABILITY.md: written to $HARDENING_FIGURES (a JSON file) when it is set."""
    path = os.environ.get("HARDENING_FIGURES")
    if not path:
        return
    target = Path(path)
    data = json.loads(target.read_text("utf-8")) if target.exists() else {}
    data[name] = value
    target.write_text(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True), "utf-8")
