"""The conversational dev set (devsets/conversations/turns.json, issue 37): turns about the wines just shown,
similar wines, constraints as people say them and quantities, played through the offline responder on the
shipped catalogue in memory, turn after turn with the history the bot keeps.

The oracle reads the catalogue file itself (data/catalog/wines.json): which shown wine is the cheapest, the
lightest or the driest, its price as a customer reads it, whether every wine shown meets the stated constraints.
It shares no code with the responder. The floor: ≥ 90 % of the turns right, and no constraint broken.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sommelier.domain.answer import answer_as_text
from sommelier.domain.conversation import ChatMessage
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.offline import OfflineResponder
from sommelier_dev.memory import memory_repositories

ROOT = Path(__file__).resolve().parents[2]
DEVSET = json.loads((ROOT / "devsets" / "conversations" / "turns.json").read_text("utf-8"))
CATALOGUE = json.loads((ROOT / "data" / "catalog" / "wines.json").read_text("utf-8"))["wines"]
FLOOR = 0.9
SWEETNESS_ORDER = ["dry", "semi_dry", "semi_sweet", "sweet"]
SEARCHES = {"search_wines", "semantic_search"}
CONSTRAINTS = {
    "wine_type",
    "sweetness",
    "sweetness_in",
    "not_sweetness",
    "price_max",
    "price_min",
    "not_country",
    "country",
    "not_names",
    "grape_any",
    "not_grape",
}


def _price(value) -> str:
    """A price as the customer reads it: «1 890 ₽» (a no-break or plain space between the thousands)."""
    return f"{int(value):,}".replace(",", " ") + " ₽"


def _norm(text: str) -> str:
    return " ".join((text or "").replace("\u00a0", " ").replace("\u202f", " ").lower().replace("ё", "е").split())


@pytest.fixture(scope="module")
def responder(catalog_memory) -> OfflineResponder:
    return OfflineResponder(memory_repositories(catalog_memory).catalog, LocalHashingEmbeddings())


@pytest.fixture(scope="module")
def rows_by_id(catalog_memory) -> dict[str, dict]:
    """Each wine of the store by its id, as the catalogue file has it (matched by name, producer and vintage)."""
    by_key = {(w["name"], w["producer"], w.get("vintage_year")): w for w in CATALOGUE}
    catalog = memory_repositories(catalog_memory).catalog
    ids = list(catalog_memory.wines)
    return {w.id: by_key[(w.name, w.producer, w.vintage_year)] for w in catalog.get_wines(ids).wines}


def _meets(row: dict, key: str, value) -> bool:
    price = float(row["price_rub"])
    checks = {
        "wine_type": lambda: row["wine_type"] == value,
        "sweetness": lambda: row["sweetness"] == value,
        "sweetness_in": lambda: row["sweetness"] in value,
        "not_sweetness": lambda: row["sweetness"] != value,
        "price_max": lambda: price <= value,
        "price_min": lambda: price >= value,
        "not_country": lambda: row["country"] != value,
        "country": lambda: row["country"] == value,
        "not_names": lambda: row["name"] not in value,
        "grape_any": lambda: any(g in row["grape_varieties"] for g in value),
        "not_grape": lambda: value not in row["grape_varieties"],
    }
    return checks[key]()


def _constraint_problems(expect: dict, shown: list[dict]) -> list[str]:
    return [
        f"{row['name']}: {key} {expect[key]!r}"
        for row in shown
        for key in sorted(CONSTRAINTS & set(expect))
        if not _meets(row, key, expect[key])
    ]


def _named(text: str, row: dict) -> bool:
    return _norm(row["name"]).replace("[", "").replace("]", "") in _norm(text).replace("[", "").replace("]", "")


def _extreme(table: list[dict], key) -> list[dict]:
    best = min(key(r) for r in table)
    return [r for r in table if key(r) == best]


def _other_problems(expect: dict, text: str, answer, table: list[dict]) -> list[str]:
    problems = []
    searched = [c["name"] for c in answer.tool_calls if c["name"] in SEARCHES]
    if expect.get("no_search") and searched:
        problems.append(f"searched: {searched}")
    if "kind" in expect and answer.response.response_type != expect["kind"]:
        problems.append(f"kind {answer.response.response_type}")
    problems += [f"does not say {s!r}" for s in expect.get("says", []) if _norm(s) not in _norm(text)]
    positions = [*([expect["says_price_of"]] if "says_price_of" in expect else []), *expect.get("says_name_of", [])]
    if any(p > len(table) for p in positions):
        return [*problems, f"the table has {len(table)} wines, the turn points at {positions}"]
    if "says_price_of" in expect:
        row = table[expect["says_price_of"] - 1 if expect["says_price_of"] > 0 else -1]
        if _norm(_price(row["price_rub"])) not in _norm(text):
            problems.append(f"no price of {row['name']} ({_price(row['price_rub'])})")
    for position in expect.get("says_name_of", []):
        row = table[position - 1]
        if not _named(text, row):
            problems.append(f"does not name {row['name']}")
    if expect.get("names_one_of_shown") and not any(_named(text, r) for r in table):
        problems.append("names none of the shown wines")
    extremes = {
        "names_cheapest_shown": lambda r: float(r["price_rub"]),
        "names_lightest_shown": lambda r: r.get("body") or 3,
        "names_driest_shown": lambda r: SWEETNESS_ORDER.index(r["sweetness"]),
    }
    for key, measure in extremes.items():
        if expect.get(key):
            winners = _extreme(table, measure)
            lead = text.split(":")[0] if ":" in text else text
            if not any(_named(lead, r) for r in winners):
                problems.append(f"{key}: expected one of {[r['name'] for r in winners]}")
    if "wines_min" in expect and len(answer.response.wines) < expect["wines_min"]:
        problems.append(f"only {len(answer.response.wines)} wines")
    return problems


def _play(responder, rows_by_id, conversations=None) -> list[tuple[str, list[str], list[str]]]:
    """Every turn: (message, constraint violations, other problems)."""
    results = []
    for conversation in conversations or DEVSET["conversations"]:
        history: list[ChatMessage] = []
        table: list[dict] = []
        for turn in conversation:
            answer = responder.respond(turn["user"], history)
            text = answer_as_text(answer.response)
            shown = [rows_by_id[w.wine_id] for w in answer.response.wines if w.wine_id]
            expect = turn["expect"]
            violations = _constraint_problems(expect, shown) if set(expect) & CONSTRAINTS else []
            results.append((turn["user"], violations, _other_problems(expect, text, answer, table)))
            if shown:
                table = shown
            ids = answer.response.wine_ids()
            history += [
                ChatMessage(len(history), "user", turn["user"], [], None, ""),
                ChatMessage(len(history) + 1, "assistant", text, ids, answer.response.response_type, ""),
            ]
    return results


def test_the_devset_has_sixty_turns_and_its_sources():
    assert sum(len(c) for c in DEVSET["conversations"]) >= 60
    readme = (ROOT / "devsets" / "conversations" / "README.md").read_text("utf-8")
    assert "http" in readme


def test_the_conversations_are_answered_right(responder, rows_by_id):
    results = _play(responder, rows_by_id)
    violations = [(message, v) for message, v, _ in results if v]
    wrong = [(message, v + p) for message, v, p in results if v or p]
    right = 1 - len(wrong) / len(results)
    report = "\n".join(f"{message}: {problems}" for message, problems in wrong)
    print(f"conversation devset: {len(results) - len(wrong)}/{len(results)} turns right ({right:.0%})\n{report}")
    assert not violations, f"constraints broken:\n{report}"
    assert right >= FLOOR, f"{right:.0%} right (floor {FLOOR:.0%}):\n{report}"


# On a real shop's file (data/catalog/shop-export-example.json, imported with --replace): the same kinds of
# turn, with expectations that read that file's rows (which shown wine is the cheapest, its price).
SHOP_FILE = json.loads((ROOT / "data" / "catalog" / "shop-export-example.json").read_text("utf-8"))["wines"]
SHOP_TURNS = [
    [
        {"user": "красное сухое к мясу", "expect": {"kind": "recommendation", "wine_type": "red", "sweetness": "dry"}},
        {"user": "сколько стоит второе?", "expect": {"no_search": True, "says_price_of": 2}},
        {"user": "какое из них дешевле?", "expect": {"no_search": True, "names_cheapest_shown": True}},
        {"user": "выбери одно", "expect": {"no_search": True, "names_one_of_shown": True}},
    ],
    [
        {"user": "белое до 3000", "expect": {"kind": "recommendation", "wine_type": "white", "price_max": 3000}},
        {"user": "а последнее почем?", "expect": {"no_search": True, "says_price_of": -1}},
    ],
    [{"user": "на 10 человек игристое, 8000 на всех", "expect": {"says": ["4 бутылки", "2 000 ₽"], "price_max": 2000}}],
]


def test_the_table_and_quantities_on_a_shop_file(shop_memory):
    by_key = {(w["name"], w["producer"], w.get("vintage_year")): w for w in SHOP_FILE}
    catalog = memory_repositories(shop_memory).catalog
    wines = catalog.get_wines(list(shop_memory.wines)).wines  # the shipped rows the import replaced are kept, unlisted
    rows = {w.id: by_key[key] for w in wines if (key := (w.name, w.producer, w.vintage_year)) in by_key}
    responder = OfflineResponder(catalog, LocalHashingEmbeddings())
    results = _play(responder, rows, SHOP_TURNS)
    wrong = [(message, v + p) for message, v, p in results if v or p]
    assert not wrong, wrong
