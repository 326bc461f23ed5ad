"""Exclusions whatever their form (issue 38, item 6): several countries, «только не», «не из», a follow-up
«а не из X?», read by the offline reader and held in LLM mode (domain/request_fit.py, agent/fitting.py), on
requests and wines written here by hand."""

from __future__ import annotations

import pytest
from sommelier.agent.fitting import fitted
from sommelier.agent.turn import OnlineTurn, TurnRequest, TurnTrace
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.domain.request_fit import RequestConstraints, RequestFit
from sommelier.domain.search import SearchResult, search_filters
from sommelier.offline.reader import read_query

from tests.wines import as_wine

READ = [
    ("красное, но кроме Италии и Франции", {"wine_type": "red", "exclude_country": "Италия, Франция"}),
    ("красное, кроме Италии или Франции", {"wine_type": "red", "exclude_country": "Италия, Франция"}),
    ("белое не из Италии, Франции и Испании", {"wine_type": "white", "exclude_country": "Италия, Франция, Испания"}),
    ("белое, только не из Италии и не из Франции", {"wine_type": "white", "exclude_country": "Италия, Франция"}),
    ("красное, только не из Аргентины", {"wine_type": "red", "exclude_country": "Аргентина"}),
    ("мальбек, но не аргентинский", {"grape_variety": "Мальбек", "exclude_country": "Аргентина"}),
    ("без шардоне и совиньона", {"exclude_grape": "Шардоне"}),  # the grape after «и» is no request either
    # what is not a list of exclusions
    ("красное из Италии или Франции", {"wine_type": "red", "country": "Италия"}),
    ("не из Италии, Франция", {"exclude_country": "Италия", "country": "Франция"}),  # the comma corrects
    ("не красное, белое", {"wine_type": "white", "exclude_wine_type": "red"}),
    ("кроме Италии, а вот Франция подойдёт", {"exclude_country": "Италия", "country": "Франция"}),
]


@pytest.mark.parametrize(("text", "filters"), READ, ids=[t for t, _ in READ])
def test_the_reader_reads_every_form(text, filters):
    assert read_query(text).filters == filters


def test_a_follow_up_rules_out_one_more_country():
    first = read_query("красное, только не из Аргентины")
    then = read_query("а не из Чили?", first)
    assert then.filters == {"wine_type": "red", "exclude_country": "Аргентина, Чили"}
    after_a_country = read_query("а не из Аргентины?", read_query("мальбек из Аргентины"))
    assert after_a_country.filters == {"grape_variety": "Мальбек", "exclude_country": "Аргентина"}
    after_two = read_query("а не из Италии и Испании?", read_query("красное итальянское"))
    assert after_two.filters == {"wine_type": "red", "exclude_country": "Италия, Испания"}


def test_the_search_reads_a_list_of_countries():
    filters = search_filters({"wine_type": "red", "exclude_country": "Италия, Франция"})
    assert filters.exclude_country == "Италия, Франция"


# ---------------------------------------------------------------------------- LLM mode: the request binds

FRENCH = as_wine(name="Bordeaux Rouge", wine_type="red", country="Франция", price_rub=1900)
ITALIAN = as_wine(name="Chianti", wine_type="red", country="Италия", price_rub=1700)
ARGENTINE = as_wine(name="Malbec Reserva", wine_type="red", country="Аргентина", grape_varieties=["Мальбек"])
SPANISH = as_wine(name="Rioja Crianza", wine_type="red", country="Испания", price_rub=1500)
UNKNOWN = as_wine(name="Домашнее красное", wine_type="red", country=None, region="", region_name=None)


def test_every_excluded_country_breaks_the_request():
    both = RequestConstraints.from_arguments({"wine_type": "red", "exclude_country": "Италия, Франция"})
    assert both.broken_by(FRENCH) == ["exclude_country"]
    assert both.broken_by(ITALIAN) == ["exclude_country"]
    assert both.broken_by(SPANISH) == []
    assert both.broken_by(UNKNOWN) == [], "a wine whose country the catalogue does not say breaks nothing"
    in_english = RequestConstraints.from_arguments({"exclude_country": "Italy and France"})
    assert in_english.broken_by(FRENCH) == ["exclude_country"]


@pytest.mark.parametrize(
    ("model", "held"),
    [
        # the model dropped one of the countries: both are put back
        ({"wine_type": "red", "exclude_country": "Италия"}, {"wine_type": "red", "exclude_country": "Италия, Франция"}),
        # the same two in another order and spelling are the same exclusion
        (
            {"wine_type": "red", "exclude_country": "France, Italy"},
            {"wine_type": "red", "exclude_country": "France, Italy"},
        ),
        # a country asked for that the customer ruled out is dropped
        ({"wine_type": "red", "country": "France"}, {"wine_type": "red", "exclude_country": "Италия, Франция"}),
    ],
)
def test_the_models_search_keeps_every_excluded_country(model, held):
    bound, _ = RequestConstraints.from_arguments({"wine_type": "red", "exclude_country": "Италия, Франция"}).bind(model)
    assert bound == held


class OwnSearch:
    def __init__(self, wines):
        self.wines, self.asked = wines, []

    def search_wines(self, filters):
        self.asked.append(filters)
        return SearchResult(found=len(self.wines), matched=len(self.wines), wines=list(self.wines))


def test_a_models_pick_from_an_excluded_country_is_refused():
    fit = RequestFit.of_searches([{"wine_type": "red", "exclude_country": "Италия, Франция", "limit": 10}], "-")
    assert fit.wants_wines
    turn = OnlineTurn(llm=None, request=TurnRequest(text="-", chat_id=1), trace=TurnTrace(), messages=[], fit=fit)  # type: ignore[arg-type]
    recs = [WineRecommendation(wine_id=w.id, wine_name=w.name, description="Подходит.") for w in (FRENCH, ITALIAN)]
    answer = SommelierResponse(response_type="recommendation", intro="Вот.", wines=recs, closing="Ещё?")
    found = {w.id: w for w in (FRENCH, ITALIAN, ARGENTINE)}
    catalog = OwnSearch([SPANISH])
    response, _, _ = fitted((answer, found, True), turn, catalog)
    assert [w.wine_name for w in response.wines] == ["Malbec Reserva", "Rioja Crianza"]
    assert catalog.asked[0].exclude_country == "Италия, Франция"


def test_a_name_search_binds_nothing():
    fit = RequestFit.of_searches([{"name": "Cloudy Bay", "limit": 10}], "есть Cloudy Bay?")
    assert fit == RequestFit()
    named_then_filters = RequestFit.of_searches([{"name": "trapiche"}, {"grape_variety": "Совиньон Блан"}], "-")
    assert named_then_filters.constraints.values == {"grape_variety": "Совиньон Блан"}
