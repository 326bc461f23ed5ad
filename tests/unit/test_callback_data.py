"""One grammar for every inline button (telegram/callback_data.py): each kind packs and unpacks to itself, the
64-byte limit is checked when packing, the buttons already in customers' chats still read, and anything else
unpacks to None, never an exception."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Literal, NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sommelier.shop import age_gate, privacy
from sommelier.telegram import render
from sommelier.telegram.callback_data import LIMIT, CallbackData, CallbackDataError, prefix_of

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "sommelier" / "sommelier"
KINDS = [render.VOTE, render.MORE, age_gate.ANSWER, privacy.ANSWER]

# Each kind of button, and its data as the bot has always sent it (old messages keep their buttons).
BUTTONS = [
    (render.VOTE, render.Vote(1, "1234"), "fb:1:1234"),
    (render.VOTE, render.Vote(-1, "1234"), "fb:-1:1234"),
    (render.MORE, render.MoreWines("1234"), "more:1234"),
    (age_gate.ANSWER, age_gate.AgeAnswer(True, 42), "age:1:42"),
    (age_gate.ANSWER, age_gate.AgeAnswer(False, -100123), "age:0:-100123"),
    (age_gate.ANSWER, age_gate.AgeAnswer(True, 42, "w_AB-12"), "age:1:42:w_AB-12"),
    (privacy.ANSWER, privacy.ForgetAnswer(True, 42), "forget:1:42"),
    (privacy.ANSWER, privacy.ForgetAnswer(False, 42), "forget:0:42"),
]


@pytest.mark.parametrize(("kind", "button", "data"), BUTTONS)
def test_each_button_packs_as_in_customers_chats_and_unpacks_to_itself(kind, button, data):
    assert kind.pack(button) == data
    assert kind.unpack(data) == button
    assert prefix_of(data) == kind.prefix


@pytest.mark.parametrize(("kind", "button", "data"), BUTTONS)
def test_a_button_is_read_only_by_its_own_kind(kind, button, data):
    assert [other.unpack(data) for other in KINDS if other is not kind] == [None] * (len(KINDS) - 1)


def test_the_prefixes_are_distinct():
    assert len({kind.prefix for kind in KINDS}) == len(KINDS)


def test_sixty_four_bytes_fit_and_sixty_five_do_not():
    longest = "9" * (LIMIT - len("fb:-1:"))
    assert len(render.VOTE.pack(render.Vote(-1, longest)).encode()) == LIMIT
    with pytest.raises(CallbackDataError):
        render.VOTE.pack(render.Vote(-1, longest + "9"))
    with pytest.raises(CallbackDataError):  # bytes, not characters: 30 Cyrillic letters are 60 bytes
        render.MORE.pack(render.MoreWines("я" * 30))
    assert render.MORE.pack(render.MoreWines("я" * 29)) == "more:" + "я" * 29  # 63 bytes


@pytest.mark.parametrize(
    ("kind", "button"),
    [
        (render.VOTE, render.Vote(2, "1")),  # not one of 1, -1
        (render.VOTE, render.Vote(True, "1")),
        (render.MORE, render.MoreWines("")),
        (render.MORE, render.MoreWines("a:b")),
        (age_gate.ANSWER, age_gate.AgeAnswer(True, "42")),
        (age_gate.ANSWER, age_gate.AgeAnswer(1, 42)),  # a flag is a bool
        (privacy.ANSWER, privacy.ForgetAnswer(True, True)),
    ],
)
def test_a_field_outside_its_type_is_refused_when_packing(kind, button):
    with pytest.raises(CallbackDataError):
        kind.pack(button)


def test_a_too_long_deep_link_is_dropped_from_the_age_button_never_the_button():
    yes, no = age_gate.question_keyboard(-(2**52), "w_" + "b" * 60)["inline_keyboard"][0]
    assert age_gate.ANSWER.unpack(yes["callback_data"]) == age_gate.AgeAnswer(True, -(2**52))
    assert age_gate.ANSWER.unpack(no["callback_data"]) == age_gate.AgeAnswer(False, -(2**52))


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        ":",
        "fb",
        "fb:",
        "fb:1",
        "fb:1:",
        "fb:0:1",
        "fb:+1:1",
        "fb:1:a:b",
        "more:",
        "more:a:b",
        "age:1",
        "age:2:1",
        "age:1:x",
        "age:1:1.5",
        "age:1:007",  # one spelling per number: what unpacks packs back to the same data
        "age:1:-0",
        "age:1:+1",
        "age:1: 1",
        "age:1:١٢",  # digits of another script
        "age:1:1:",
        "age:1:1:a:b",
        "age:1:" + "9" * 40,
        "forget:yes:1",
        "forget:1:1:1",
        "FORGET:1:1",
        "buy:42",
    ],
)
def test_malformed_and_foreign_data_unpacks_to_none(data):
    assert [kind.unpack(data) for kind in KINDS] == [None] * len(KINDS)


@given(
    st.text(max_size=80)
    | st.lists(st.sampled_from(["fb", "more", "age", "forget", "1", "-1", "0", "x", ""])).map(":".join)
)
def test_any_data_unpacks_to_its_kind_or_none_and_never_raises(data):
    for kind in KINDS:
        found = kind.unpack(data)
        assert found is None or (isinstance(found, kind.kind) and kind.pack(found) == data)


def test_a_kind_with_a_field_type_the_grammar_has_not_is_refused():
    class Price(NamedTuple):
        roubles: float

    with pytest.raises(TypeError):
        CallbackData("price", Price).pack(Price(1.5))


def test_a_literal_of_words_is_a_choice():
    class Sort(NamedTuple):
        order: Literal["asc", "desc"]

    sort = CallbackData("sort", Sort)
    assert sort.pack(Sort("asc")) == "sort:asc" and sort.unpack("sort:desc") == Sort("desc")
    assert sort.unpack("sort:up") is None


@pytest.mark.parametrize("prefix", ["", "a:b"])
def test_a_prefix_is_one_word(prefix):
    with pytest.raises(ValueError):
        CallbackData(prefix, render.MoreWines)


def _hand_made_callback_data(path: Path) -> list[int]:
    """Lines where a button's callback_data is written as a string or an f-string instead of packed."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "callback_data":
                    if isinstance(value, ast.Constant | ast.JoinedStr | ast.BinOp):
                        lines.append(node.lineno)
    return lines


def test_every_button_of_the_package_is_packed_by_its_kind():
    hand_made = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := _hand_made_callback_data(path))
    }
    assert hand_made == {}


def test_the_check_sees_a_hand_made_button(tmp_path):
    module = tmp_path / "keyboard.py"
    module.write_text('BUTTON = {"text": "Да", "callback_data": f"age:1:{42}"}\nOTHER = {"callback_data": "x"}\n')
    assert _hand_made_callback_data(module) == [1, 2]
