"""The request's hard constraints (domain/request_fit.py) and their checks in the agent (agent/fitting.py,
the streamed wine's gate in agent/streaming.py), on wines written here by hand."""

from __future__ import annotations

import json

import pytest
from sommelier.agent.fitting import fitted
from sommelier.agent.streaming import IntroPiece, Shown, StreamedAnswer, WinePiece
from sommelier.agent.turn import OnlineTurn, TurnRequest, TurnTrace
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.domain.request_fit import RequestConstraints, RequestFit
from sommelier.domain.search import SearchResult

from tests.wines import as_wine

ROSE = as_wine(name="Côte des Roses Rosé", wine_type="rose", country="Франция", price_rub=2190)
WHITE_FR = as_wine(name="Chablis", wine_type="white", country="Франция", region_name="Бургундия", price_rub=4290)
WHITE_ES = as_wine(name="Rueda Verdejo", wine_type="white", country="Испания", price_rub=1290)
WHITE_GE = as_wine(name="Цинандали", wine_type="white", country="Грузия", price_rub=1190)
SOLD_OUT = as_wine(name="Албариньо", wine_type="white", country="Испания", price_rub=1500, available=False)
CHIANTI = as_wine(
    name="Pèppoli Chianti Classico",
    country="Италия",
    region_name="Тоскана",
    appellation="Chianti Classico",
    grape_varieties=["Санджовезе 90%", "Мерло"],
    price_rub=2790,
)


def constraints(**values) -> RequestConstraints:
    return RequestConstraints.from_arguments(values)


@pytest.mark.parametrize(
    ("stated", "wine", "broken"),
    [
        ({"wine_type": "white"}, ROSE, ["wine_type"]),
        ({"wine_type": "белое"}, WHITE_ES, []),  # the search's own spelling of a value
        ({"price_max": 2000}, ROSE, ["price_max"]),
        ({"price_max": 2}, WHITE_ES, []),  # «до 2 тысяч» as the reader or a model wrote it
        ({"price_min": 2000, "price_max": 1000}, WHITE_ES, []),  # a swapped range is the range meant
        ({"price_min": 1500}, WHITE_ES, ["price_min"]),
        ({"exclude_country": "Италия"}, CHIANTI, ["exclude_country"]),
        ({"exclude_country": "Italy"}, CHIANTI, ["exclude_country"]),
        ({"country": "Испания"}, WHITE_FR, ["country"]),
        ({"region": "Тоскана"}, CHIANTI, []),
        ({"region": "Бордо"}, CHIANTI, ["region"]),
        ({"exclude_region": "Тоскана"}, CHIANTI, ["exclude_region"]),
        ({"exclude_region": "Chianti Classico"}, CHIANTI, ["exclude_region"]),
        ({"grape_variety": "Санджовезе"}, CHIANTI, []),
        ({"exclude_grape": "мерло"}, CHIANTI, ["exclude_grape"]),
        ({"wine_type": "white"}, SOLD_OUT, ["available"]),
        ({"food_pairing": "рыба", "sort": "price_asc"}, ROSE, []),  # a dish or an order binds nothing
    ],
)
def test_a_wine_breaks_what_it_does_not_keep(stated, wine, broken):
    assert constraints(**stated).broken_by(wine) == broken


def test_a_fact_the_wine_does_not_have_breaks_nothing():
    unknown = as_wine(name="Домашнее", wine_type="red", country=None, region="", region_name=None)
    assert constraints(exclude_country="Италия", region="Тоскана").broken_by(unknown) == []


@pytest.mark.parametrize(
    ("stated", "model", "held"),
    [
        ({"price_max": 2000}, {"price_max": 2}, {"price_max": 2000}),
        ({"price_max": 2000}, {"wine_type": "red"}, {"wine_type": "red", "price_max": 2000}),
        (
            {"price_min": 1000, "price_max": 2000},
            {"price_min": 2000, "price_max": 1000},
            {"price_min": 1000, "price_max": 2000},
        ),
        (
            {"wine_type": "white"},
            {"wine_type": "rose", "food_pairing": "рыба"},
            {"wine_type": "white", "food_pairing": "рыба"},
        ),
        (
            {"wine_type": "sparkling", "sweetness": "dry"},
            {"wine_type": "white"},
            {"wine_type": "sparkling", "sweetness": "dry"},
        ),
        ({"exclude_country": "Италия"}, {"country": "Italy"}, {"exclude_country": "Италия"}),
        ({"exclude_country": "Франция"}, {"wine_type": "white"}, {"wine_type": "white", "exclude_country": "Франция"}),
        # Narrowing is the model's to do: a grape or a dish it adds stays.
        (
            {"wine_type": "red"},
            {"wine_type": "красное", "grape_variety": "Саперави"},
            {"wine_type": "красное", "grape_variety": "Саперави"},
        ),
    ],
)
def test_the_models_search_is_held_to_the_request(stated, model, held):
    bound, changes = constraints(**stated).bind(model)
    assert {k: v for k, v in bound.items()} == held
    assert bool(changes) == (model != held)


def test_without_a_stated_budget_a_range_is_still_read_as_meant():
    bound, changes = RequestConstraints().bind({"price_min": 3, "price_max": 1500})
    assert bound == {"price_min": 1500, "price_max": 3000} and len(changes) == 2


def test_the_request_asks_for_wines_when_it_states_a_constraint():
    assert RequestFit.of_searches([]) == RequestFit()
    assert RequestFit.of_searches([{"food_pairing": "сыр", "limit": 8}]).wants_wines is False
    fit = RequestFit.of_searches([{"query": "к ужину", "wine_type": "white"}, {"wine_type": "white", "limit": 8}])
    assert fit.wants_wines and fit.constraints == constraints(wine_type="white")


# ---------------------------------------------------------------------------- the answer's check


class OwnSearch:
    """The catalogue port's search, recorded: what the project searched for itself."""

    def __init__(self, wines):
        self.wines, self.asked = wines, []

    def search_wines(self, filters):
        self.asked.append(filters)
        return SearchResult(found=len(self.wines), matched=len(self.wines), wines=list(self.wines))


def turn_of(fit: RequestFit) -> OnlineTurn:
    return OnlineTurn(llm=None, request=TurnRequest(text="-", chat_id=1), trace=TurnTrace(), messages=[], fit=fit)  # type: ignore[arg-type]


def recommending(*wines) -> SommelierResponse:
    recs = [WineRecommendation(wine_id=w.id, wine_name=w.name, description="Подходит.") for w in wines]
    return SommelierResponse(response_type="recommendation", intro="Вот.", wines=recs, closing="Ещё?")


WHITE_REQUEST = RequestFit(True, constraints(wine_type="white", exclude_country="Франция"))


def test_a_pick_that_breaks_the_request_is_replaced_by_a_fitting_wine_the_turn_found():
    found = {w.id: w for w in (ROSE, WHITE_ES, WHITE_FR, WHITE_GE)}
    turn = turn_of(WHITE_REQUEST)
    response, shown_from, _ = fitted((recommending(ROSE, WHITE_ES), found, True), turn, OwnSearch([]))
    assert [w.wine_name for w in response.wines] == ["Rueda Verdejo", "Цинандали"]
    assert response.intro == "Вот.", "a kept wine keeps the model's words"
    assert any("dropped" in c for c in turn.trace.corrections)


def test_nothing_found_is_not_accepted_while_the_projects_search_finds_fitting_wines():
    nothing = SommelierResponse(response_type="informational", intro="Ничего не нашлось.", closing="Ещё?")
    catalog = OwnSearch([WHITE_GE, WHITE_FR])
    response, found, _ = fitted((nothing, {}, True), turn_of(WHITE_REQUEST), catalog)
    assert [w.wine_name for w in response.wines] == ["Цинандали"]  # Chablis is French: not shown
    assert "Ничего" not in response.intro and WHITE_GE.id in found
    assert catalog.asked and catalog.asked[0].wine_type == "white" and catalog.asked[0].exclude_country == "Франция"


def test_when_nothing_in_the_catalogue_fits_no_unfitting_wine_is_shown():
    response, _, _ = fitted((recommending(ROSE), {ROSE.id: ROSE}, True), turn_of(WHITE_REQUEST), OwnSearch([]))
    assert response.response_type == "informational" and not response.wines


def test_an_answer_to_a_request_without_constraints_is_left_alone():
    answer = (recommending(ROSE), {ROSE.id: ROSE}, True)
    assert fitted(answer, turn_of(RequestFit()), OwnSearch([WHITE_ES])) == answer


# ---------------------------------------------------------------------------- the streamed gate


def _stream(answer: dict, fit: RequestFit, found) -> list:
    pieces = StreamedAnswer(found, Shown(), admit=fit.admits(), hold_intro=fit.wants_wines)
    text = json.dumps(answer, ensure_ascii=False)
    out = []
    for start in range(0, len(text), 7):
        out += pieces.feed(text[start : start + 7])
    return out


def test_a_streamed_wine_that_breaks_the_request_is_never_sent_and_the_intro_waits_for_a_fitting_one():
    found = {w.id: w for w in (ROSE, WHITE_ES)}
    answer = {
        "response_type": "recommendation",
        "intro": "Вот два вина к рыбе.",
        "wines": [
            {"wine_id": ROSE.id, "wine_name": ROSE.name, "description": "Свежее розовое."},
            {"wine_id": WHITE_ES.id, "wine_name": WHITE_ES.name, "description": "Свежее белое."},
        ],
        "closing": "Ещё?",
    }
    pieces = [p for p in _stream(answer, WHITE_REQUEST, found) if isinstance(p, (IntroPiece, WinePiece))]
    assert [type(p).__name__ for p in pieces] == ["IntroPiece", "WinePiece"]
    assert pieces[1].wine.id == WHITE_ES.id


def test_a_streamed_intro_of_an_answer_without_wines_is_never_sent():
    answer = {"response_type": "informational", "intro": "К сожалению, ничего не нашлось.", "wines": [], "closing": "?"}
    assert _stream(answer, WHITE_REQUEST, {}) == []
