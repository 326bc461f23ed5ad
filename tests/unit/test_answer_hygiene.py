"""Markdown marks come off the customer's text; an answer not in Russian is refused."""

from __future__ import annotations

import json

import pytest
from sommelier.agent.answer import LANGUAGE_ERROR, parse_final_response, plain_draft, plain_text, russian_share

from tests.wines import by_id

WINE_ID = "6f1c2a4e-8d3b-4c1a-9e2f-1a2b3c4d5e6f"
FOUND = by_id(
    {
        "id": WINE_ID,
        "name": "Château Lafleur Pomerol",
        "producer": "Château Lafleur",
        "region": "Bordeaux",
        "grape_varieties": ["Merlot", "Cabernet Franc"],
    }
)


@pytest.mark.parametrize(
    "marked,plain",
    [
        ("**Отличный** выбор", "Отличный выбор"),
        ("__мягкие__ танины и *сочный* фрукт", "мягкие танины и сочный фрукт"),
        ("***очень*** _лёгкое_ ~~сладкое~~", "очень лёгкое сладкое"),
        ("## Итог\n* вишня\n* слива", "Итог\n• вишня\n• слива"),
        ("см. `Pinot Noir` и [сайт](https://example.com)", "см. Pinot Noir и сайт"),
        ("5 * 3 = 15, snake_case_name и 2*x", "5 * 3 = 15, snake_case_name и 2*x"),
    ],
)
def test_plain_text(marked, plain):
    assert plain_text(marked) == plain


def answer(intro: str, description: str, closing: str) -> str:
    return json.dumps(
        {
            "response_type": "recommendation",
            "intro": intro,
            "wines": [{"wine_id": WINE_ID, "wine_name": "Château Lafleur Pomerol", "description": description}],
            "closing": closing,
            "guard_type": None,
        },
        ensure_ascii=False,
    )


def test_claude_bold_is_removed_before_the_customer_sees_it():
    result = parse_final_response(
        answer("**Вот** мой выбор", "**Château Lafleur** — *бархатное* вино к утке", "Ещё?"), FOUND
    )
    assert result.ok, result.error
    assert "*" not in result.text
    assert "бархатное вино к утке" in result.text


def test_english_answer_is_refused_and_russian_with_latin_names_is_not():
    english = parse_final_response(answer("Here is my pick.", "Great with duck, soft tannins.", "More?"), FOUND)
    assert english.error == LANGUAGE_ERROR
    russian = parse_final_response(
        answer(
            "Вот что подойдёт к утке.",
            "Château Lafleur из Pomerol: Merlot и Cabernet Franc, бархатные танины.",
            "Подобрать что-то ещё?",
        ),
        FOUND,
    )
    assert russian.ok, russian.error


def test_short_texts_are_not_judged():
    assert russian_share(["OK!"]) is None
    assert russian_share(["Привет, как дела?"]) == 1.0


@pytest.mark.parametrize(
    "growing,shown",
    [
        ("**Вот", "Вот"),
        ("**Вот** что я *под", "Вот что я под"),
        ("Вино `Pino", "Вино Pino"),
        ("2*3 и snake_case", "2*3 и snake_case"),
    ],
)
def test_a_draft_shows_no_half_written_marks(growing, shown):
    assert plain_draft(growing) == shown
