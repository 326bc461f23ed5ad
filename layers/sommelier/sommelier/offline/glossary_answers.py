"""A glossary answer (language/data/glossary.json) and its closing question, phrased as the request it offers
(«Показать Пино Нуар из каталога?»), so that a yes to it is read as that request."""

from __future__ import annotations

from sommelier import language
from sommelier.domain.answer import MAX_INTRO, SommelierResponse
from sommelier.offline.intent import QueryIntent
from sommelier.offline.reader import read_query
from sommelier.offline.wording import clip, pick

_INFO_CLOSINGS = {
    "tannins": "Показать красные вина с мягкими танинами?",
    "acidity": "Подобрать свежее вино с яркой кислотностью?",
    "body": "Подобрать для примера пару лёгких вин?",
    "brut": "Подобрать хороший брют?",
    "sweetness": "Показать для сравнения пару полусладких вин?",
    "serving_temperature": "Подобрать вино к ближайшему ужину?",
    "oak": "Показать вина с выдержкой в дубе?",
    "traditional_method": "Показать игристые, сделанные классическим методом?",
    "champagne": "Подобрать игристое к празднику?",
    "rose": "Показать пару сухих розовых вин?",
    "pinot_noir": "Показать Пино Нуар из каталога?",
    "cabernet_sauvignon": "Подобрать Каберне Совиньон к ужину?",
    "malbec": "Показать мальбек из каталога?",
    "chardonnay": "Показать шардоне в разных стилях?",
    "riesling": "Показать рислинги из каталога?",
    "saperavi": "Показать грузинские вина из Саперави?",
}


_INFO_DEFAULT_CLOSINGS = (
    "Хотите, подберу вино, на котором это хорошо чувствуется?",
    "Подобрать вино к ближайшему ужину?",
    "Если интересно, расскажу ещё о чём-нибудь или подберу вино.",
)


def info_offer(answer_text: str) -> str | None:
    """The closing question of a glossary answer, when the answer ends with one. Each is phrased as the
    request it offers («Показать Пино Нуар из каталога?»), so a yes to it is read as that request."""
    tail = answer_text.rstrip()
    questions = [q for q in (*_INFO_CLOSINGS.values(), *_INFO_DEFAULT_CLOSINGS) if q.endswith("?")]
    return next((q for q in questions if tail.endswith(q)), None)


def informational(topic: str | None, query: str) -> SommelierResponse:
    entry = language.glossary_topic(topic) if topic else None
    if entry is None:
        intro = pick(
            [
                "На этот вопрос у меня нет короткой справки: в офлайн-режиме я знаю основные винные термины — танины, "
                "кислотность, терруар, декантацию, выдержку в дубе и другие.",
                "Подробно ответить на это сейчас не смогу, но объясню базовые понятия: танины, тело вина, аппелласьоны, "
                "температуру подачи, хранение.",
            ],
            query,
            "info-unknown",
        )
        closing = "Спросите о термине или расскажите, к какому случаю подобрать вино."
        return SommelierResponse(response_type="informational", intro=intro, closing=closing)
    closing = _INFO_CLOSINGS.get(entry.key) or pick(_INFO_DEFAULT_CLOSINGS, query, "info-closing")
    return SommelierResponse(response_type="informational", intro=clip(entry.answer, MAX_INTRO), closing=closing)


def yes_to_info_offer(text: str, answer: str) -> QueryIntent | None:
    """«да» to a glossary answer's closing question («Показать Пино Нуар из каталога?»): the question is
    phrased as the request it offers, so it is read as the customer's own words."""
    if not language.cues("dialogue.json", "affirmative").covers(text):
        return None
    question = info_offer(answer)
    intent = read_query(question) if question else None
    return intent if intent is not None and intent.kind == "recommendation" else None
