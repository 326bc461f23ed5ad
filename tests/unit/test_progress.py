"""What may be shown while the answer streams: checked pieces only, each once, and the merged final answer."""

from __future__ import annotations

import json
import uuid

from sommelier.agent.streaming import DraftPiece, IntroPiece, Shown, StreamedAnswer, WinePiece, merge_shown
from sommelier.domain.answer import SommelierResponse, WineRecommendation

from tests.wines import by_id

RIOJA, MALBEC, GHOST = (str(uuid.uuid4()) for _ in range(3))
FOUND = by_id(
    {"id": RIOJA, "name": "Риоха Крианса", "producer": "Бодегас", "region": "Риоха"},
    {"id": MALBEC, "name": "Мальбек Резерва", "producer": "Катена", "region": "Мендоса"},
)


class Recorder:
    """The pieces a streamed answer hands out, as (kind, ...) tuples."""

    def __init__(self):
        self.events: list[tuple] = []

    def take(self, pieces):
        for piece in pieces:
            if isinstance(piece, DraftPiece):
                self.events.append(("draft", piece.text))
            elif isinstance(piece, IntroPiece):
                self.events.append(("intro", piece.text))
            elif isinstance(piece, WinePiece):
                self.events.append(("wine", piece.recommendation.wine_id, piece.wine.id))


def answer(wines, response_type="recommendation", intro="Вот что я нашёл к стейку."):
    return json.dumps(
        {"response_type": response_type, "intro": intro, "wines": wines, "closing": "Ещё?", "guard_type": None},
        ensure_ascii=False,
    )


def stream(text: str, shown: Shown | None = None) -> tuple[Recorder, Shown]:
    recorder, shown = Recorder(), shown or Shown()
    streamed = StreamedAnswer(FOUND, shown)
    for i in range(0, len(text), 7):
        recorder.take(streamed.feed(text[i : i + 7]))
    return recorder, shown


def test_grounded_wines_are_shown_after_the_intro_and_ungrounded_ones_never():
    text = answer(
        [
            {"wine_id": None, "wine_name": "риоха крианса", "description": "К мясу."},
            {"wine_id": GHOST, "wine_name": "Шато Выдумка", "description": "Его нет в каталоге."},
            {"wine_id": MALBEC, "wine_name": "Мальбек Резерва", "description": "Плотный."},
        ]
    )
    recorder, shown = stream(text)
    kinds = [e[0] for e in recorder.events]
    assert kinds[-3:] == ["intro", "wine", "wine"] and set(kinds[:-3]) == {"draft"}
    assert [e[1] for e in recorder.events if e[0] == "wine"] == [RIOJA, MALBEC]
    assert shown.intro == "Вот что я нашёл к стейку." and [w.wine_id for w in shown.wines] == [RIOJA, MALBEC]


def test_nothing_is_shown_twice_across_attempts():
    first = answer([{"wine_id": RIOJA, "wine_name": "Риоха Крианса", "description": "К мясу."}])
    _, shown = stream(first)
    again = answer(
        [
            {"wine_id": RIOJA, "wine_name": "Риоха Крианса", "description": "К мясу."},
            {"wine_id": MALBEC, "wine_name": "Мальбек Резерва", "description": "Плотный."},
        ],
        intro="Другое вступление.",
    )
    recorder, shown = stream(again, shown)
    assert recorder.events == [("wine", MALBEC, MALBEC)]
    assert "Риоха Крианса" in shown.retry_note()


def test_an_informational_answer_shows_no_wines_and_a_leaking_intro_is_not_shown():
    recorder, shown = stream(answer([], response_type="informational", intro="Танины — это вещества кожицы."))
    assert [e[0] for e in recorder.events if e[0] != "draft"] == ["intro"]
    recorder, shown = stream(answer([], response_type="informational", intro='Мой ответ: {"response_type": 1}'))
    assert [e for e in recorder.events if e[0] != "draft"] == [] and shown.intro is None


def test_merge_keeps_what_was_shown_and_adds_only_new_wines():
    shown = Shown(
        intro="Показанное вступление.",
        wines=[WineRecommendation(wine_id=RIOJA, wine_name="Риоха Крианса", description="К мясу.")],
    )
    final = SommelierResponse(
        response_type="recommendation",
        intro="Новое вступление.",
        wines=[
            WineRecommendation(wine_id=RIOJA, wine_name="Риоха Крианса", description="Иначе."),
            WineRecommendation(wine_id=MALBEC, wine_name="Мальбек Резерва", description="Плотный."),
        ],
        closing="Ещё?",
    )
    merged = merge_shown(final, shown)
    assert merged.intro == "Показанное вступление."
    assert [(w.wine_id, w.description) for w in merged.wines] == [(RIOJA, "К мясу."), (MALBEC, "Плотный.")]
    assert merged.closing == "Ещё?"
    assert merge_shown(final, Shown()) is final
