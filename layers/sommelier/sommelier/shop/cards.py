"""A wine's card for a shelf QR code / deep link: the wine with its photo and pairings, then two similar wines.

An unknown sku or id gets a friendly line and the closest alternatives instead.
"""

from __future__ import annotations

from typing import Any

from sommelier.domain.errors import PortError
from sommelier.shop.health import health_warning
from sommelier.store.ports import ShopRepository
from sommelier.telegram.render import Outgoing, render_text, render_wine

SIMILAR_HEADER = "Похожие вина, которые тоже стоит попробовать:"
NOT_FOUND = (
    "Этого вина сейчас нет в нашем каталоге — возможно, его уже раскупили или код на полке устарел. "
    "Вот самые близкие варианты:"
)
SOLD_OUT = "«{name}» сейчас нет в продаже — вот самые похожие вина, которые есть:"
CARD_CLOSING = "Расскажите, к какому блюду или поводу нужно вино, — подберу ещё."
UNAVAILABLE = "Не получилось открыть карточку вина прямо сейчас — попробуйте, пожалуйста, чуть позже."


def _pairs_with(wine: dict[str, Any]) -> str:
    pairings = [p for p in wine.get("food_pairings") or [] if p]
    return f"К чему подать: {', '.join(pairings[:8])}." if pairings else ""


def _card_text(wine: dict[str, Any]) -> str:
    pairing = _pairs_with(wine)
    body = " ".join(x for x in (wine.get("description") or "", wine.get("tasting_notes") or "") if x).strip()
    # The pairing goes first: it is what a customer at the shelf asks about, and a long description is cut.
    return f"{pairing}\n\n{body}".strip() if pairing else body


def _short_text(wine: dict[str, Any]) -> str:
    return " ".join(x for x in (wine.get("tasting_notes") or wine.get("description") or "", _pairs_with(wine)) if x)


def _closing() -> list[Outgoing]:
    warning = health_warning()
    return render_text(f"{CARD_CLOSING}\n\n{warning}" if warning else CARD_CLOSING)


def card_parts(shop: ShopRepository, ref: str) -> list[Outgoing]:
    try:
        result = shop.wine_card(ref)
    except PortError:
        return render_text(UNAVAILABLE)
    wine = result.get("wine")
    if wine is None:
        gone = result.get("unavailable")
        line = SOLD_OUT.format(name=gone["name"]) if gone else NOT_FOUND
        alternatives = result.get("alternatives") or []
        return render_text(line) + [render_wine(w, _short_text(w)) for w in alternatives] + _closing()
    parts = [render_wine(wine, _card_text(wine))]
    similar = result.get("similar") or []
    if similar:
        parts += render_text(SIMILAR_HEADER) + [render_wine(w, _short_text(w)) for w in similar]
    return parts + _closing()
