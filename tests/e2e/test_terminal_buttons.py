"""The button rules and price rendering in the terminal chat (the shared router, the in-memory store, offline)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from sommelier.app import build_runtime
from sommelier.settings import load_settings
from sommelier.telegram.dialog import OLD_ANSWER
from sommelier_dev.cli.chat_cmd import TerminalChat, wrap_for_terminal

from tests.bot_harness import database_url, repositories_for

PRICE = re.compile(r"\d{1,3}(?:\u202f\d{3})+\u202f₽")
CHAT_ID = 4040


@pytest.fixture
def terminal(monkeypatch, fresh_memory, state_dir):
    monkeypatch.setenv("DATABASE_URL", database_url(fresh_memory))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = io.StringIO()
    chat = TerminalChat(
        build_runtime(load_settings(), repositories=repositories_for(fresh_memory)),
        CHAT_ID,
        Console(file=out, width=38, highlight=False),
    )
    yield chat, out


def history(chat) -> list[dict]:
    return chat.runtime.repositories.chat.history(CHAT_ID, 50)


@pytest.mark.parametrize("width", range(14, 61))
def test_a_price_never_breaks_across_lines(width):
    text = "Кьянти Классико — Кастелло, 2020\nТоскана, Италия · 1\u202f190\u202f₽ и ещё 12\u202f490\u202f₽ за магнум"
    wrapped = wrap_for_terminal(text, width)
    found_on_lines = [price for line in wrapped.splitlines() for price in PRICE.findall(line)]
    assert found_on_lines == PRICE.findall(text)  # every price whole on one line


def test_terminal_prices_buttons_and_hints(terminal):
    chat, out = terminal
    chat.handle("красное сухое к стейку до 3000")
    shown = out.getvalue()
    whole = [price for line in shown.splitlines() for price in PRICE.findall(line)]
    assert whole and len(whole) == shown.count("₽"), "every price whole on one line (a 38-column console)"
    assert [label for label, _ in chat.buttons] == ["👍", "👎", "Ещё варианты"]
    turns = len(history(chat))

    out.truncate(0), out.seek(0)
    chat.handle("7")  # no button 7: a hint, not an off-topic answer
    assert "Кнопки «7» нет" in out.getvalue() and "1–3" in out.getvalue()
    assert len(history(chat)) == turns

    out.truncate(0), out.seek(0)
    chat.handle("1")  # 👍
    assert "Рад, что понравилось" in out.getvalue()
    assert [label for label, _ in chat.buttons] == ["👍 ✓", "👎", "Ещё варианты"]
    chat.handle("2")  # changed to 👎: the last press wins
    assert "изменена" in out.getvalue()
    assert [label for label, _ in chat.buttons] == ["👍", "👎 ✓", "Ещё варианты"]

    chat.handle("/reset")
    out.truncate(0), out.seek(0)
    chat.handle("3")  # «Ещё варианты» of a forgotten answer
    assert OLD_ANSWER.split(" —")[0] in out.getvalue()
    assert history(chat) == []  # no agent turn ran
