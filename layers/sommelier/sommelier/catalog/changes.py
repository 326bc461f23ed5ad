"""What a re-import changes, against the catalogue as it was: new wines, wines no longer for sale, price and
stock changes; and the stored wines a skipped row names, kept as they were (`--replace` never delists a wine
for one bad cell)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sommelier.domain.catalog import ExportedWine
from sommelier.domain.records import WineRecord


@dataclass
class CatalogChanges:
    new: list[str] = field(default_factory=list)
    delisted: list[str] = field(default_factory=list)
    price: list[str] = field(default_factory=list)  # «name: 1 290 → 1 390 ₽»
    back_in_stock: list[str] = field(default_factory=list)
    out_of_stock: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # stored wines whose row was skipped: left as they were
    still_in: list[str] = field(default_factory=list)  # without --replace: wines for sale that are not in the file

    def any(self) -> bool:
        return any((self.new, self.delisted, self.price, self.back_in_stock, self.out_of_stock))


def _rub(value: Any) -> str:
    amount = Decimal(str(value))
    text = f"{amount:,.2f}".rstrip("0").rstrip(".") if amount % 1 else f"{int(amount):,}"
    return text.replace(",", " ") + " ₽"


class StoredIndex:
    """The stored wines by id, by sku, and by name, producer and vintage (those without a sku)."""

    def __init__(self, wines: list[ExportedWine]):
        self.wines = wines
        self.by_id = {w.id: w for w in wines}
        self.by_sku = {w.sku: w for w in wines if w.sku}
        self.by_key = {(w.name, w.producer, w.vintage_year): w for w in wines if not w.sku}

    def match(self, record: WineRecord) -> ExportedWine | None:
        if record.id and record.id in self.by_id:
            return self.by_id[record.id]
        if record.sku:
            return self.by_sku.get(record.sku)
        return self.by_key.get(record.natural_key())

    def named_by(self, item: dict[str, Any]) -> ExportedWine | None:
        """The stored wine a skipped row names by its sku (or, without one, by its name alone when only one
        stored wine has it)."""
        sku = str(item.get("sku") or "").strip()
        if sku:
            return self.by_sku.get(sku)
        name = str(item.get("name") or "").strip()
        same = [w for w in self.wines if w.name == name and not w.sku]
        return same[0] if len(same) == 1 else None


def changes_of(
    records: list[WineRecord], stored: StoredIndex, kept: list[ExportedWine], *, replace: bool
) -> CatalogChanges:
    changes = CatalogChanges(kept=[w.name for w in kept])
    matched: set[str] = {w.id for w in kept}
    for record in records:
        before = stored.match(record)
        if before is None:
            changes.new.append(record.name)
            continue
        matched.add(before.id)
        if Decimal(str(before.price_rub)) != record.price_rub:
            changes.price.append(f"{record.name}: {_rub(before.price_rub)} → {_rub(record.price_rub)}")
        was_available = before.available is not False
        if was_available and not record.available:
            changes.out_of_stock.append(record.name)
        elif not was_available and record.available:
            changes.back_in_stock.append(record.name)
    not_in_file = [w.name for w in stored.wines if w.id not in matched and w.available is not False]
    if replace:
        changes.delisted = not_in_file
    else:
        changes.still_in = not_in_file
    return changes
