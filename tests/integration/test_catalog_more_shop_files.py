"""Five more real shops' files (tests/data/catalogues, sources in SOURCES.md there), imported raw. Each oracle
was written by hand from the file's rows, sharing nothing with the importer: which rows are wines, which are
not and why."""

from __future__ import annotations

import csv
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
