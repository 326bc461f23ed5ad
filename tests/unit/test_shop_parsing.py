"""The shop's small grammars: age and /forget button data, deep-link payloads, report periods and bands.
Anything this bot did not produce parses to None (or a clear error), never an exception."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sommelier.shop import age_gate, privacy
from sommelier.shop.deeplinks import DeepLinkError, wine_link, wine_payload, wine_ref_from_start
from sommelier.shop.report import ReportError, parse_since, price_band


def test_age_buttons_round_trip_and_fit_telegrams_64_bytes():
    keyboard = age_gate.question_keyboard(2**52, "w_" + "a" * 36)
    yes, no = keyboard["inline_keyboard"][0]
    assert (yes["text"], no["text"]) == ("Да", "Нет")
    assert (yes["callback_data"], no["callback_data"]) == (f"age:1:{2**52}:w_{'a' * 36}", f"age:0:{2**52}")
    assert all(len(b["callback_data"].encode()) <= 64 for b in (yes, no))
    assert age_gate.ANSWER.unpack(yes["callback_data"]) == age_gate.AgeAnswer(True, 2**52, "w_" + "a" * 36)
    assert age_gate.ANSWER.unpack(no["callback_data"]) == age_gate.AgeAnswer(False, 2**52, "")
    # A payload that would not fit is dropped, never the button.
    long_yes = age_gate.question_keyboard(-(2**52), "w_" + "b" * 60)["inline_keyboard"][0][0]["callback_data"]
    assert len(long_yes.encode()) <= 64 and age_gate.ANSWER.unpack(long_yes).adult


def test_forget_buttons_round_trip():
    yes, no = privacy.confirm_keyboard(42)["inline_keyboard"][0]
    assert (yes["callback_data"], no["callback_data"]) == ("forget:1:42", "forget:0:42")  # as in customers' chats
    assert privacy.ANSWER.unpack(yes["callback_data"]) == privacy.ForgetAnswer(True, 42)
    assert privacy.ANSWER.unpack(no["callback_data"]) == privacy.ForgetAnswer(False, 42)


@given(st.text(max_size=80))
def test_foreign_button_data_is_none(data):
    if not data.startswith(("age:", "forget:")):
        assert age_gate.ANSWER.unpack(data) is None and privacy.ANSWER.unpack(data) is None
    for parsed in (age_gate.ANSWER.unpack(data), privacy.ANSWER.unpack(data)):
        assert parsed is None or isinstance(parsed.user_id, int)


@pytest.mark.parametrize("data", ["age:2:1", "age:1:x", "age:1", "forget:1:1:1", "forget:yes:1", "", None])
def test_malformed_button_data_is_none(data):
    assert age_gate.ANSWER.unpack(data) is None
    assert privacy.ANSWER.unpack(data) is None


def test_deep_links():
    assert wine_link("@Shop_bot", "AB-12") == "https://t.me/Shop_bot?start=w_AB-12"
    assert wine_ref_from_start("w_AB-12") == "AB-12"
    for argument in ("", "w_", "hello", "w_a b", "w_" + "x" * 63, None, "wb_", "wb_!!", "wb_" + "_" * 8):
        assert wine_ref_from_start(argument) is None
    # a shop's article as written: Cyrillic, spaces, dots, slashes go through base64url, within 64 characters
    for ref in ("ВЛ-0101", "a b", "12.345/A", "ящик", "Артикул-22-буквы-ровно"[:22], "x" * 62):
        payload = wine_payload(ref)
        assert len(payload) <= 64 and all(c.isascii() and (c.isalnum() or c in "_-") for c in payload)
        assert wine_ref_from_start(payload) == ref
    assert wine_payload("ВЛ-0101").startswith("wb_") and wine_payload("x" * 62) == "w_" + "x" * 62
    for ref in ("", "   ", "x" * 63 + "я", "Я" * 23):  # nothing, or too long for a link once encoded
        with pytest.raises(DeepLinkError):
            wine_payload(ref)
    with pytest.raises(DeepLinkError):
        wine_link("not a bot", "AB-12")


def test_periods_and_price_bands():
    assert parse_since("7d") == timedelta(days=7) and parse_since(" 24h ") == timedelta(hours=24)
    assert parse_since("2w") == timedelta(weeks=2)
    for bad in ("7", "d7", "0h", "400d", "7 days"):
        with pytest.raises(ReportError):
            parse_since(bad)
    assert price_band({"price_max": 2000}) == "1 000–2 000 ₽"
    assert price_band({"price_min": 2250, "price_max": 3750}) == "2 000–3 000 ₽"  # «около 3 тысяч»
    assert price_band({"price_min": 5000}) == "3 000–5 000 ₽" and price_band({"price_min": 5001}) == "от 5 000 ₽"
    assert price_band({"wine_type": "red"}) is None
