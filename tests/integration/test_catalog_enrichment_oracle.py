"""An oracle for the import's enrichment, independent of the code it checks: its own small table of
appellations (country, region, principal grapes), written here from public facts (the appellations' rules
and the wine regions' maps), and its own plain matching of names. It shares nothing with the language layer.

On the real shop files committed under tests/data/catalogues, every wine whose name names one of these
appellations must get, in at least 95% of cases, the right country, region and a principal grape.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sommelier.catalog.importer import prepare_rows, read_catalog

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogues"
FILES = [
    "vinoteka34_inventory.json",
    "alkoteka_every8th.json",
    "winestyle-parser_old.xlsx",
    "wine-assistant_dw_sample_products.csv",
    "hand_written_market.yml",
]
FLOOR = 0.95

# name pattern (lower case, ё as е) → (country, accepted region names, principal grapes' stems)
# The regions accept the appellation's own name where a map draws it as a region of its own.
ORACLE: list[tuple[str, str, set[str], set[str]]] = [
    (r"шабли", "франция", {"бургундия", "шабли"}, {"шардоне"}),
    (r"кьянти", "италия", {"тоскана"}, {"санджовезе"}),
    (r"брунелло", "италия", {"тоскана"}, {"санджовезе"}),
    (r"бароло", "италия", {"пьемонт"}, {"неббиоло"}),
    (r"барбареско", "италия", {"пьемонт"}, {"неббиоло"}),
    (r"барбера д.\s?(альба|асти)", "италия", {"пьемонт"}, {"барбера"}),
    (r"гави", "италия", {"пьемонт"}, {"кортезе"}),
    (r"просекко", "италия", {"венето", "фриули", "венето и фриули"}, {"глера"}),
    (r"амароне", "италия", {"венето"}, {"корвина"}),
    (r"вальполичелл", "италия", {"венето"}, {"корвина"}),
    (r"соаве", "италия", {"венето"}, {"гарганега"}),
    (r"монтепульчано д.\s?абруццо", "италия", {"абруццо"}, {"монтепульчано"}),
    (r"болгери", "италия", {"тоскана"}, {"каберне", "мерло", "верментино", "совиньон"}),
    (r"риоха", "испания", {"риоха"}, {"темпранильо", "гарнача", "гренаш", "виура", "макабео"}),
    (r"рибера дель дуэро", "испания", {"кастилия и леон", "рибера дель дуэро"}, {"темпранильо"}),
    (r"(?<![а-я])кава(?![а-я])", "испания", {"каталония", "пенедес"}, {"макабео", "парельяда", "шарелло"}),
    (r"приорат", "испания", {"каталония"}, {"гарнача", "гренаш", "кариньена", "кариньян"}),
    (r"сансер", "франция", {"долина луары", "луара"}, {"совиньон блан", "пино нуар"}),
    (r"пуйи.фюме", "франция", {"долина луары", "луара"}, {"совиньон блан"}),
    (r"вувре", "франция", {"долина луары", "луара"}, {"шенен"}),
    (r"мюскаде", "франция", {"долина луары", "луара"}, {"мелон", "мюскаде"}),
    (r"шампань", "франция", {"шампань"}, {"шардоне", "пино нуар", "пино менье"}),
    (r"креман де бургонь", "франция", {"бургундия"}, {"шардоне", "пино нуар"}),
    (r"шатонеф.дю.пап", "франция", {"долина роны", "рона"}, {"гренаш"}),
    (r"кот.дю.рон", "франция", {"долина роны", "рона"}, {"гренаш", "сира"}),
    (r"сент.эмильон", "франция", {"бордо"}, {"мерло", "каберне"}),
    (r"пойяк|марго(?![а-я])|медок", "франция", {"бордо"}, {"каберне", "мерло"}),
    (r"винью верде|виньо верде", "португалия", {"минью", "винью верде"}, {"алваринью", "лоурейру", "винань"}),
    (r"мозель", "германия", {"мозель", "германия"}, {"рислинг"}),
    (r"мендоса", "аргентина", {"мендоса", "куйо"}, {"мальбек"}),
    (r"марлборо", "новая зеландия", {"марлборо"}, {"совиньон блан", "пино нуар"}),
    (r"(?<![а-я])асти(?![а-я])", "италия", {"пьемонт"}, {"мускат", "москато"}),
    (r"франчакорта", "италия", {"ломбардия"}, {"шардоне", "пино нуар"}),
]


# Names that carry an appellation's word but are another wine: Vin Santo del Chianti is a DOC of its own.
NOT_CLEAN = re.compile(r"вин санто")


def _norm(text: str) -> str:
    return (text or "").lower().replace("ё", "е").replace("-", " ")


def _appellation_of(name: str):
    text = _norm(name)
    if NOT_CLEAN.search(text):
        return None
    hits = [entry for entry in ORACLE if re.search(entry[0], text)]
    return hits[0] if len(hits) == 1 else None  # a name naming two of them is not a clean case


def _right(record, entry) -> dict[str, bool | None]:
    """Each fact right or wrong; None when the shop gave it (the oracle checks what the import inferred;
    a fact neither given nor inferred is wrong)."""
    _, country, regions, grapes = entry
    given = [_norm(g) for g in record.grape_varieties]

    def judged(field: str, right: bool) -> bool | None:
        shop_gave = field not in record.inferred and getattr(record, field) not in ("", [], None)
        return None if shop_gave else right

    return {
        "country": judged("country", _norm(record.country) == country),
        "region": judged("region", any(_norm(r) in _norm(record.region) for r in regions)),
        "grape": judged("grape_varieties", any(stem in g for g in given for stem in grapes)),
    }


@pytest.fixture(scope="module")
def checked() -> list[tuple[str, dict[str, bool]]]:
    results = []
    for name in FILES:
        for record in prepare_rows(read_catalog(DATA / name), DATA).records:
            entry = _appellation_of(record.name)
            if entry is not None:
                results.append((f"{name}: {record.name}", _right(record, entry)))
    return results


def test_the_oracle_sees_enough_appellation_wines(checked):
    assert len(checked) >= 100, len(checked)


@pytest.mark.parametrize("fact", ["country", "region", "grape"])
def test_appellation_wines_get_the_right_facts(checked, fact):
    judged = [(name, right[fact]) for name, right in checked if right[fact] is not None]
    wrong = [name for name, right in judged if not right]
    share = 1 - len(wrong) / len(judged)
    assert len(judged) >= 80, (fact, len(judged))
    assert share >= FLOOR, f"{fact}: {share:.1%} right of {len(judged)}; wrong: {wrong[:15]}"
