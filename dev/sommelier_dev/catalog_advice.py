"""What the owner reads about the catalogue (`catalog stats`, `doctor`): the wines for sale and not, apart,
and what to improve first: the gap that costs the most answers, in Russian, with what to do."""

from __future__ import annotations

from sommelier.domain.catalog import CatalogStats
from sommelier.domain.wine import WINE_TYPE_RU

# field → (how the owner calls it, the column to add or fill, what the customers lose without it)
_FIELDS = {
    "country": ("страна", "Страна", "не найдут по «итальянское», «из Франции» и «кроме Италии»"),
    "grape_varieties": ("сорт винограда", "Сорт винограда", "не найдут по «совиньон», «пино нуар»"),
    "region": ("регион", "Регион", "не найдут по «Бордо», «Тоскана», «Кубань»"),
    "producer": ("производитель", "Производитель", "не найдут по винодельне и не увидят её в карточке"),
    "description": ("описание", "Описание", "ассистент подбирает их только по названию и стилю"),
    "food_pairings": ("гастрономия", "Гастрономия", "подбор к блюду опирается только на стиль"),
    "vintage_year": ("год урожая", "Год урожая", "в карточке «NV»"),
    "photo": ("фото", "Фото (ссылка) или файл в папке каталога", "карточки приходят без фото"),
}
_INFERRED = ("wine_type", "sweetness", "country")
SHOWN = 3


def _count(number: int) -> str:
    return f"{number:,}".replace(",", " ")


def improvements(stats: CatalogStats) -> list[str]:
    """The gaps of the wines for sale, the largest first (at most SHOWN), each saying what to do."""
    if stats.available == 0:
        how = "импортируйте файл магазина: `sommelier catalog import FILE --replace`"
        return [
            f"ни одно вино не в продаже — {how}"
            + (f" (в каталоге {_count(stats.wines)} снятых)" if stats.wines else "")
        ]
    gaps: list[tuple[int, str]] = []
    for field, (word, column, loss) in _FIELDS.items():
        coverage = stats.coverage.get(field)
        missing = coverage.unknown if coverage else (stats.available - stats.with_photo if field == "photo" else 0)
        if missing:
            gaps.append(
                (
                    missing,
                    f"{word}: нет у {_count(missing)} из {_count(stats.available)} вин в продаже — {loss};"
                    f" заполните колонку «{column}» и импортируйте снова",
                )
            )
    for field in _INFERRED:
        coverage = stats.coverage.get(field)
        if coverage and coverage.inferred * 2 > stats.available:  # more guessed than given: worth a look
            word = {"wine_type": "цвет", "sweetness": "сахар", "country": "страна"}[field]
            gaps.append(
                (
                    coverage.inferred // 2,
                    f"{word}: у {_count(coverage.inferred)} вин выведен из названий — проверьте"
                    " в выгрузке (`sommelier catalog export catalogue.xlsx`, колонка inferred) и впишите свои значения",
                )
            )
    gaps.sort(key=lambda gap: -gap[0])
    return [text for _, text in gaps[:SHOWN]]


def stats_lines(stats: CatalogStats) -> list[str]:
    """`catalog stats` in Russian: for sale and not apart, then the figures of the wines for sale."""
    lines = [
        f"вин в каталоге: {_count(stats.wines)} — в продаже {_count(stats.available)},"
        f" нет в продаже {_count(stats.unavailable)} (закончились или сняты)"
    ]
    if stats.by_type:
        lines.append(
            "в продаже по цвету: "
            + ", ".join(f"{WINE_TYPE_RU.get(k, k)} {_count(v)}" for k, v in stats.by_type.items())
        )
    if stats.by_country:
        top = list(stats.by_country.items())[:8]
        named = ", ".join(f"{k or 'страна не указана'} {_count(v)}" for k, v in top)
        more = len(stats.by_country) - len(top)
        lines.append(f"в продаже по странам: {named}" + (f" и ещё {more}" if more > 0 else ""))
    if stats.price_rub is not None:
        low, median, high = stats.price_rub
        lines.append(f"цены в продаже: от {_count(int(low))} до {_count(int(high))} ₽, медиана {_count(int(median))} ₽")
    lines.append(f"с фото: {_count(stats.with_photo)} из {_count(stats.available)} в продаже")
    if stats.embedding_models:
        models = ", ".join(f"{m or 'нет'} ({_count(c)})" for m, c in stats.embedding_models.items())
        lines.append(f"эмбеддинги (все вина): {models}")
    if stats.coverage:
        lines.append("поля вин в продаже (из файла / выведено из названий / неизвестно):")
        for field, coverage in stats.coverage.items():
            lines.append(
                f"  {field}: {_count(coverage.given)} / {_count(coverage.inferred)} / {_count(coverage.unknown)}"
            )
    advice = improvements(stats)
    if advice:
        lines.append("что улучшить первым:")
        lines += [f"  {n}. {text}" for n, text in enumerate(advice, 1)]
    return lines
