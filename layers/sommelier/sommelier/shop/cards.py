"""A wine's card for a shelf QR code / deep link: the wine with its photo and pairings, then two similar wines.

An unknown sku or id gets a friendly line and the closest alternatives instead.
"""

from __future__ import annotations

from sommelier.domain.errors import PortError
from sommelier.domain.wine import Wine
from sommelier.repositories.ports import ShopRepository
from sommelier.telegram.render import Outgoing, render_text, render_wine

SIMILAR_HEADER = "Похожие вина, которые тоже стоит попробовать:"
NOT_FOUND = (
    "Этого вина сейчас нет в нашем каталоге — возможно, его уже раскупили или код на полке устарел. "
    "Вот самые близкие варианты:"
)
SOLD_OUT = "«{name}» сейчас нет в продаже — вот самые похожие вина, которые есть:"
CARD_CLOSING = "Расскажите, к какому блюду или поводу нужно вино, — подберу ещё."
UNAVAILABLE = "Не получилось открыть карточку вина прямо сейчас — попробуйте, пожалуйста, чуть позже."


def _pairs_with(wine: Wine) -> str:
    pairings = [p for p in wine.food_pairings if p]
    return f"К чему подать: {', '.join(pairings[:8])}." if pairings else ""


def _card_text(wine: Wine) -> str:
    pairing = _pairs_with(wine)
    body = " ".join(x for x in (wine.description or "", wine.tasting_notes or "") if x).strip()
    # The pairing goes first: it is what a customer at the shelf asks about, and a long description is cut.
    return f"{pairing}\n\n{body}".strip() if pairing else body


def _short_text(wine: Wine) -> str:
    return " ".join(x for x in (wine.tasting_notes or wine.description or "", _pairs_with(wine)) if x)


def _closing(warning: str | None) -> list[Outgoing]:
    return render_text(f"{CARD_CLOSING}\n\n{warning}" if warning else CARD_CLOSING)


def card_parts(shop: ShopRepository, ref: str, warning: str | None) -> list[Outgoing]:
    """The card of the wine ``ref``; ``warning`` is the health warning under it (None: none)."""
    try:
        card = shop.wine_card(ref)
    except PortError:
        return render_text(UNAVAILABLE)
    wine = card.wine
    if wine is None:
        gone = card.unavailable
        line = SOLD_OUT.format(name=gone.name) if gone else NOT_FOUND
        return render_text(line) + [render_wine(w, _short_text(w)) for w in card.alternatives] + _closing(warning)
    parts = [render_wine(wine, _card_text(wine))]
    similar = card.similar
    if similar:
        parts += render_text(SIMILAR_HEADER) + [render_wine(w, _short_text(w)) for w in similar]
    return parts + _closing(warning)
