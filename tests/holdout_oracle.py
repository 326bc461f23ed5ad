"""An independent oracle for the held-out shop catalogue (tests/data/holdout/).

It reads the shop's CSV with its own minimal code and judges the offline responder's answers against the
hand-written expectations in queries.json and the CSV rows themselves. It imports nothing from the package it
checks: no sommelier.language, no tools.matching, no evaluation. The words it needs (the shop's own wording
for wine types and sweetness) are written out here, on purpose, a second time.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.wines import message, rows

HOLDOUT = Path(__file__).resolve().parent / "data" / "holdout"
CATALOGUE = HOLDOUT / "catalogue.csv"
QUERIES = HOLDOUT / "queries.json"

# The shop writes types and sweetness in Russian; the oracle's own reading of them.
SHOP_TYPES = {"красное": "red", "белое": "white", "розовое": "rose", "игристое": "sparkling"}
SHOP_SWEETNESS = {
    "сухое": "dry",
    "брют": "dry",
    "полусухое": "semi_dry",
    "полусладкое": "semi_sweet",
    "сладкое": "sweet",
}
# The columns the importer documents (docs/catalog.md § 3); every other header is the shop's own.
DOCUMENTED_COLUMNS = frozenset(
    "sku name producer country region appellation vintage_year grape_varieties wine_type sweetness body tannins"
    " acidity price_rub description tasting_notes food_pairings image_url image image_key id".split()
)
# The same columns as a shop's own export would name them (the oracle's own reading, written out here).
RUSSIAN_HEADERS = {
    "sku": "Артикул",
    "name": "Наименование",
    "producer": "Производитель",
    "country": "Страна",
    "region": "Регион",
    "appellation": "Апелласьон",
    "vintage_year": "Год урожая",
    "grape_varieties": "Сорт винограда",
    "wine_type": "Цвет",
    "sweetness": "Сахар",
    "body": "Тело",
    "tannins": "Танины",
    "acidity": "Кислотность",
    "price_rub": "Цена, руб.",
    "description": "Описание",
    "tasting_notes": "Дегустационные заметки",
    "food_pairings": "Гастрономия",
    "image_url": "Фото",
}
# «В описании есть то, что вы ищете: «…»» — a reason that quotes a word instead of naming an attribute.
RANDOM_WORD_REASON = re.compile(r"(?i)в описании есть то, что вы ищете")
SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
# The bot's closing question offers to show wines: «Показать?», «Поднимем бюджет?», «…или показать ещё варианты?»
OFFER = re.compile(r"(?i)\b(?:показать|покажу|посмотрим|поискать|поднимем|попробуем)\b[^?]*\?\s*$")
COLOUR_WORD = re.compile(r"(?i)(?<![а-яё])(цвет|окраск|оттен)")


@dataclass(frozen=True)
class ShopWine:
    sku: str
    name: str
    producer: str
    vintage: int | None
    country: str
    grapes: tuple[str, ...]  # names without shares, as the shop wrote them
    wine_type: str
    sweetness: str
    price: Decimal
    description: str
    tasting_notes: str
    pairings: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str, int | None]:
        return (self.name, self.producer, self.vintage)


def _price(text: str) -> Decimal:
    return Decimal(re.sub(r"[\s\u00a0\u202f₽]", "", text).replace(",", "."))


def _grape_name(entry: str) -> str:
    return re.sub(r"\s*\d+(?:[.,]\d+)?\s*%\s*$", "", entry.strip()).strip()


def read_shop_csv(path: Path = CATALOGUE) -> tuple[list[str], list[ShopWine]]:
    """The header and the wines, read with the csv module: BOM, ';' between cells, lists inside a cell."""
    text = path.read_bytes().decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text), delimiter=";"))
    header = next(csv.reader(io.StringIO(text), delimiter=";"))
    wines = []
    for row in rows:
        wines.append(
            ShopWine(
                sku=row["sku"],
                name=row["name"].strip(),
                producer=row["producer"].strip(),
                vintage=int(row["vintage_year"]) if row["vintage_year"].strip() else None,
                country=row["country"].strip(),
                grapes=tuple(_grape_name(g) for g in re.split(r"[,;]", row["grape_varieties"]) if g.strip()),
                wine_type=SHOP_TYPES[row["wine_type"].strip().lower()],
                sweetness=SHOP_SWEETNESS[row["sweetness"].strip().lower()],
                price=_price(row["price_rub"]),
                description=row["description"],
                tasting_notes=row["tasting_notes"],
                pairings=tuple(p.strip() for p in row["food_pairings"].split(";") if p.strip()),
            )
        )
    return header, wines


def unknown_columns(header: list[str]) -> list[str]:
    return [column for column in header if column not in DOCUMENTED_COLUMNS]


def load_queries(path: Path = QUERIES) -> list[dict[str, Any]]:
    return json.loads(path.read_text("utf-8"))["conversations"]


def constraint_problems(wine: ShopWine, constraints: dict[str, Any]) -> list[str]:
    """Which of the turn's explicit constraints the shop row fails."""
    problems = []
    if "wine_type" in constraints and wine.wine_type not in constraints["wine_type"]:
        problems.append(f"type {wine.wine_type}")
    if "sweetness" in constraints and wine.sweetness not in constraints["sweetness"]:
        problems.append(f"sweetness {wine.sweetness}")
    if "price_max" in constraints and wine.price > Decimal(constraints["price_max"]):
        problems.append(f"price {wine.price} > {constraints['price_max']}")
    if "price_min" in constraints and wine.price < Decimal(constraints["price_min"]):
        problems.append(f"price {wine.price} < {constraints['price_min']}")
    if "country_any" in constraints and wine.country not in constraints["country_any"]:
        problems.append(f"country {wine.country}")
    if "grape_any" in constraints:
        wanted = {g.casefold() for g in constraints["grape_any"]}
        if not wanted & {g.casefold() for g in wine.grapes}:
            problems.append(f"grapes {list(wine.grapes)}")
    if "pairing_any" in constraints and not set(constraints["pairing_any"]) & set(wine.pairings):
        problems.append(f"pairings {list(wine.pairings)}")
    return problems


def sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in SENTENCE_END.split(text or "") if s.strip()]


# ---------------------------------------------------------------------------------------------- playing turns


@dataclass
class TurnResult:
    conversation: str
    text: str
    kind: str
    failures: list[tuple[str, str]] = field(default_factory=list)  # (failure class, detail)
    skus: list[str] = field(default_factory=list)
    answer: str = ""

    @property
    def ok(self) -> bool:
        return not self.failures


@dataclass
class HoldoutRun:
    turns: list[TurnResult]

    @property
    def right(self) -> int:
        return sum(t.ok for t in self.turns)

    def by_class(self) -> Counter:
        return Counter(cls for t in self.turns for cls in {c for c, _ in t.failures})

    def turns_with(self, failure_class: str) -> list[TurnResult]:
        return [t for t in self.turns if any(c == failure_class for c, _ in t.failures)]

    def summary(self) -> str:
        lines = [f"{self.right}/{len(self.turns)} turns right"]
        for cls, count in sorted(self.by_class().items()):
            lines.append(f"  {cls}: {count}")
            for turn in self.turns_with(cls):
                details = "; ".join(d for c, d in turn.failures if c == cls)
                lines.append(f"    [{turn.conversation}] {turn.text!r}: {details[:300]}")
        return "\n".join(lines)


def _card_checks(result: TurnResult, cards: list[tuple[ShopWine, str]]) -> None:
    seen: dict[str, int] = {}
    for index, (wine, caption) in enumerate(cards):
        parts = sentences(caption)
        if RANDOM_WORD_REASON.search(caption):
            result.failures.append(("random_word_reason", f"{wine.sku}: {caption[:160]}"))
        opening = parts[0] if parts else ""
        colour = sentences(wine.tasting_notes)[:1]
        if opening and (
            (colour and opening == colour[0]) or (COLOUR_WORD.search(opening) and len(opening.split()) <= 12)
        ):
            result.failures.append(("colour_caption", f"{wine.sku}: {opening}"))
        claims = re.findall(
            r"рекомендуемые сочетания: ([^)]*)\)|(?:среди сочетаний есть|в списке сочетаний —) ([^;.]*)", caption
        )
        for claim in (a or b for a, b in claims):
            rest = claim.casefold()  # a claim may list several of the row's pairings, which may hold commas
            for pairing in sorted(wine.pairings, key=len, reverse=True):
                rest = rest.replace(pairing.casefold(), "")
            if not re.fullmatch(r"[\s,;]*(?:и[\s,;]*)*", rest):
                result.failures.append(("false_reason", f"{wine.sku}: claims «{claim}» of {list(wine.pairings)}"))
        if len(wine.grapes) > 1 and re.search(r"(?i)моносорт", caption):
            result.failures.append(
                ("false_reason", f"{wine.sku}: a blend of {len(wine.grapes)} grapes called моносорт")
            )
        for sentence in set(parts):
            if sentence in seen and seen[sentence] != index:
                result.failures.append(("repeated_sentence", sentence))
            seen.setdefault(sentence, index)


# How a card says which dish it pairs with: «Подходит к утке: …», «Хорошо ляжет к плову (…)», «К плову — то, что нужно».
DISH_CLAIM = re.compile(r"(?:[Пп]одходит|[Хх]орошо ляжет) к ([^:(;.]+?)\s*[:(]|(?:^|[.;] )К ([^—;.]+?) — ")


def _dish_checks(result: TurnResult, cards: list[tuple[ShopWine, str]], stems: list[str]) -> None:
    """A card names the customer's dish, a synonym or its category; never another dish («мидии» → «к устрицам»)."""
    for wine, caption in cards:
        for claim in (a or b for a, b in DISH_CLAIM.findall(caption)):
            words = re.findall(r"[а-я]+", claim.lower().replace("ё", "е"))
            if not any(w.startswith(stem) for w in words for stem in stems):
                result.failures.append(("wrong_dish_named", f"{wine.sku}: «к {claim}»"))


def play(
    respond: Callable[[str, list[dict]], Any],
    answer_text: Callable[[Any], str],
    wines: list[ShopWine],
    conversations: list[dict[str, Any]],
) -> HoldoutRun:
    """Play every conversation through `respond(text, history)` (the offline responder's entry point).

    `answer_text(response)` renders an answer the way the agent saves it in the history.
    """
    by_key = {w.key: w for w in wines}
    by_sku = {w.sku: w for w in wines}
    results: list[TurnResult] = []
    for conversation in conversations:
        history: list[dict] = []
        previous: tuple[dict, list[ShopWine], str] | None = None
        for turn in conversation["turns"]:
            result = TurnResult(conversation["conversation"], turn["text"], turn["kind"])
            answer = respond(turn["text"], history)
            response = answer.response
            text = answer_text(response)
            result.answer = text
            found = {w["id"]: w for w in rows(answer.found_wines)}
            cards: list[tuple[ShopWine, str]] = []
            for rec in response.wines:
                shown = found.get(rec.wine_id)
                wine = None
                if shown is not None:
                    wine = by_sku.get(shown.get("sku") or "") or by_key.get(
                        (shown["name"], shown["producer"], shown.get("vintage_year"))
                    )
                if wine is None:
                    result.failures.append(("outside_file", f"{rec.wine_name} ({rec.wine_id})"))
                    continue
                cards.append((wine, rec.description))
            for shown in rows(answer.found_wines):
                if (shown["name"], shown["producer"], shown.get("vintage_year")) not in by_key:
                    result.failures.append(("outside_file", f"found {shown['name']} / {shown['producer']}"))
            result.skus = [w.sku for w, _ in cards]
            _judge(result, turn, cards, previous)
            _card_checks(result, cards)
            if "dish_named_as" in turn:
                _dish_checks(result, cards, turn["dish_named_as"])
            results.append(result)
            history += [
                message("user", turn["text"]),
                message("assistant", text, response.wine_ids()),
            ]
            previous = (turn, [w for w, _ in cards], text)
    return HoldoutRun(results)


def _judge(
    result: TurnResult, turn: dict, cards: list[tuple[ShopWine, str]], previous: tuple[dict, list[ShopWine], str] | None
) -> None:
    constraints = turn["constraints"]
    expect = turn["expect"]
    shown = [w for w, _ in cards]
    if expect == "none" and shown:
        for wine in shown:
            for problem in constraint_problems(wine, constraints):
                result.failures.append(("constraint", f"{wine.sku}: {problem}"))
        return
    if expect == "wines" and not shown:
        cls = "food_unanswered" if turn["kind"] == "food" else "unanswered"
        result.failures.append((cls, result.answer[:200]))
        return
    if expect == "wines_if_offered":
        offered = previous is not None and OFFER.search(sentences(previous[2])[-1] if previous[2] else "")
        if offered and not shown:
            result.failures.append(("offer_ignored", result.answer[:200]))
        if previous is not None and shown:
            before = previous[0]["constraints"]
            for wine in shown:  # an accepted offer relaxes one filter, never more
                if len(constraint_problems(wine, before)) > 1:
                    result.failures.append(("constraint", f"{wine.sku}: {constraint_problems(wine, before)}"))
        return
    if constraints.get("cheaper_than_previous") and previous is not None and previous[1]:
        ceiling = max(w.price for w in previous[1])
        for wine in shown:
            if wine.price >= ceiling:
                result.failures.append(("followup", f"{wine.sku}: {wine.price} not below {ceiling}"))
    kind = "followup" if turn["kind"] == "followup" else "constraint"
    for wine in shown:
        for problem in constraint_problems(wine, constraints):
            result.failures.append((kind, f"{wine.sku}: {problem}"))
