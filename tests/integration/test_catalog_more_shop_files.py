"""Five more real shops' files (tests/data/catalogues, sources in SOURCES.md there), imported raw. Each oracle
was written by hand from the file's rows, sharing nothing with the importer: which rows are wines, which are
not and why."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
from sommelier.catalog.importer import CatalogImportError, prepare_rows, read_catalog

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogues"

# Read by hand: «ликёрное …» and «Kagor» are liqueur wines, «Портвейн» a port; «Напиток слабоалкогольный» and
# «Винный напиток» are drinks, not wine; «Пом-Икс ежевичное» a blackberry «вино».
GLOBUS_FORTIFIED = {"87", "192", "67", "39"}
GLOBUS_NOT_WINE = {"1135"}
PEREKRESTOK_FRUIT = {"534"}
PEREKRESTOK_NOT_WINE = {"516"}


def skus(name: str) -> list[str]:
    with (DATA / name).open(encoding="utf-8") as f:
        return [row["id"] for row in csv.DictReader(f, delimiter="\t")]


@pytest.mark.parametrize(
    ("name", "fortified", "fruit", "not_wine"),
    [
        ("vinorate_globus_every25th.tsv", GLOBUS_FORTIFIED, set(), GLOBUS_NOT_WINE),
        ("vinorate_perekrestok_every15th.tsv", set(), PEREKRESTOK_FRUIT, PEREKRESTOK_NOT_WINE),
    ],
)
def test_a_supermarket_shelf_imports_its_grape_wines_and_lists_the_rest(name, fortified, fruit, not_wine):
    prepared = prepare_rows(read_catalog(DATA / name), DATA)
    every = set(skus(name))
    assert {r.sku for r in prepared.records} == every - fortified - fruit - not_wine
    assert dict(prepared.skipped) == {
        k: len(v) for k, v in (("fortified", fortified), ("fruit wine", fruit), ("not wine", not_wine)) if v
    }
    assert not prepared.problems
    assert all(line.startswith("строка ") for line in prepared.skipped_rows)


def test_named_wines_come_in_with_their_kind_and_sweetness():
    by_sku = {r.sku: r for r in prepare_rows(read_catalog(DATA / "vinorate_globus_every25th.tsv"), DATA).records}
    # «Marani Kindzmarauli» (Красное, полусладкое), «Trapiche Sauvignon Blanc» (Белое, полусухое)
    assert (by_sku["108"].wine_type, by_sku["108"].sweetness, by_sku["108"].appellation) == (
        "red",
        "semi_sweet",
        "Киндзмараули",
    )
    assert (by_sku["709"].wine_type, by_sku["709"].sweetness) == ("white", "semi_dry")


def test_a_bar_menu_with_no_wine_bottle_is_refused_with_its_figures():
    # The Tilda store of a wine bar: food, cocktails, spirits by the glass, and three «2 бокала …» sets.
    with pytest.raises(CatalogImportError) as info:
        prepare_rows(read_catalog(DATA / "dowine_bar_tilda_store.json"), DATA)
    assert "ничего не импортировано" in str(info.value) and "из " in str(info.value)


# Butelka (Ljubljana): every row a wine, filed by colour in Slovenian (Rdeče red, Belo white, Mehurčki
# sparkling, Rose), sweet ones under «Sladko»; «Sweetness» is the shop's own 0–5 scale, said in no words, so
# kept as written. Read by hand: the two sweet wines named by their appellation (Tokaji Aszú, Passito di
# Pantelleria) are white; the two «Cipro» say no colour anywhere, so they are listed, not guessed.
BUTELKA_COLOUR = {"Rdeče": "red", "Belo": "white", "Mehurčki": "sparkling", "Rose": "rose"}
BUTELKA_SWEET_WHITE = {"50046002", "50063002"}
BUTELKA_NO_COLOUR = {"50071002", "50105002"}


def test_a_slovenian_shops_master_list_imports_raw():
    with (DATA / "butelka_wines_all.csv").open(encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    expected = {r["SKU"]: (BUTELKA_COLOUR[r["Category"]], "dry") for r in rows if r["Category"] in BUTELKA_COLOUR}
    expected |= {sku: ("white", "sweet") for sku in BUTELKA_SWEET_WHITE}
    prepared = prepare_rows(read_catalog(DATA / "butelka_wines_all.csv"), DATA)
    assert {r.sku: (r.wine_type, r.sweetness) for r in prepared.records} == expected
    assert len(prepared.records) == 181 and len(rows) == 183
    assert not prepared.skipped  # every row is a wine
    assert dict(prepared.problem_groups) == {"цвет не понятен": 2}
    assert {p.wine.rsplit("sku ", 1)[1] for p in prepared.problems} == BUTELKA_NO_COLOUR
    assert all(r.available for r in prepared.records)  # no stock column: all for sale
    assert {r.extra.get("sweetness_as_written", "") for r in prepared.records} == {"", "0", "1", "2", "3", "4", "5"}


# Whispering Vine (a US shop's sale list): short names, the section in «Wine Type». Read by hand: «High West
# Gift Boxes» is a distillery's gift box filed under «Other Red»; «Meyer-Näkel Rosé» under «Other Red» and
# «Beau Joie Rose» under «Sparkling» are a rosé and a sparkling wine; «Truchard» and «En Route» each appear
# twice, with another colour: two wines each.
WHISPERING_KIND = {
    "Cabernet": "red", "International Red": "red", "Pinot Noir": "red", "Red Blend": "red", "Other Red": "red",
    "Chardonnay": "white", "Other White": "white", "Sparkling": "sparkling",
}  # fmt: skip


def test_a_us_shops_sale_list_imports_raw():
    rows = json.loads((DATA / "whispering-vine_purple-friday_wines.json").read_text("utf-8"))
    expected = Counter(WHISPERING_KIND[r["Wine Type"]] for r in rows if r["Wine"] != "High West Gift Boxes")
    expected["red"] -= 1
    expected["rose"] += 1  # Meyer-Näkel Rosé
    prepared = prepare_rows(read_catalog(DATA / "whispering-vine_purple-friday_wines.json"), DATA)
    assert (
        Counter(r.wine_type for r in prepared.records)
        == expected
        == {"red": 43, "white": 13, "sparkling": 6, "rose": 1}
    )
    assert Counter(r.sweetness for r in prepared.records) == {"dry": 63}
    assert dict(prepared.skipped) == {"not wine": 1} and "High West Gift Boxes" in prepared.skipped_rows[0]
    assert not prepared.problems
    twice = [r for r in prepared.records if r.name in ("Truchard", "En Route")]
    assert len(twice) == 4  # the first of each keeps no article, the second gets one generated
    assert sorted(str(r.sku)[:5] for r in twice) == ["None", "None", "АВТО-", "АВТО-"]
    assert all(r.available for r in prepared.records)
