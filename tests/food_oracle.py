"""The shipped catalogue's pairings sorted by hand into food categories: the tests' own statement of which
wines a dish request should reach (written independently of sommelier.language and its dish data)."""

from __future__ import annotations

BEEF = frozenset(
    {"стейк", "стейк из говядины", "бургеры", "котлеты", "мясо на гриле", "рагу", "телятина", "тушёная говядина"}
    | {"шашлык", "шницель", "барбекю"}
)
LAMB = frozenset({"ягнятина", "шашлык", "мясо на гриле", "рагу", "барбекю", "хинкали"})
PORK = frozenset({"свинина", "свиные рёбрышки", "колбаски на гриле", "котлеты", "шницель", "шашлык", "мясо на гриле"})
PORK_BBQ = PORK | {"барбекю"}
GAME = frozenset({"дичь", "кабан"})
POULTRY = frozenset({"курица", "курица карри", "утка", "шашлык из курицы", "паэлья", "барбекю"})
FISH = frozenset({"лосось", "речная рыба", "рыба", "рыба в сливочном соусе", "рыба на гриле", "суши"})
SEAFOOD = frozenset({"морепродукты", "мидии", "омар", "устрицы", "икра", "паэлья"})
HARD_CHEESE = frozenset({"выдержанные сыры", "пармезан", "пекорино", "твёрдые сыры", "сыры с плесенью", "сыр"})
SOFT_CHEESE = frozenset({"козий сыр", "мягкие сыры", "сулугуни", "сыр"})
ASIAN = frozenset({"азиатская кухня", "индийская кухня", "суши"})
CHARCUTERIE = frozenset({"фуа-гра", "паштеты", "хамон", "мясные закуски"})
STARTERS = frozenset({"закуски", "канапе", "тапас", "орехи", "икра", "мясные закуски", "паштеты", "хамон", "фуа-гра"})
PASTA = frozenset(
    {"паста", "паста болоньезе", "паста с мясным соусом", "паста с рагу", "паста со сливочным соусом", "лазанья"}
    | {"ризотто", "ризотто с трюфелем"}
)
PIZZA = frozenset({"пицца"})
DESSERTS = frozenset(
    {"десерт", "десерты", "торт", "выпечка", "горький шоколад", "панеттоне", "фруктовые тарты", "фрукты"}
    | {"ягодные десерты", "сыры с плесенью"}
)

# A request's dish → the pairings that satisfy it.
BY_REQUEST = {
    "стейк": BEEF,
    "шашлык": BEEF | LAMB | PORK_BBQ,
    "мясо": BEEF | LAMB | PORK_BBQ | GAME,
    "рыба": FISH,
    "морепродукты": SEAFOOD,
    "сыр": HARD_CHEESE | SOFT_CHEESE,
    "паста": PASTA,
    "пицца": PIZZA,
    "утка": POULTRY,
    "десерт": DESSERTS,
}


def norm(text: str | None) -> str:
    return " ".join((text or "").lower().replace("ё", "е").replace("-", " ").split())


def pairs_with(wine: dict, pairings: frozenset[str]) -> bool:
    names = {norm(p) for p in pairings}
    return any(norm(p) in names for p in wine["food_pairings"])
