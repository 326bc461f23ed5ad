"""How customer phrasing maps onto catalogue values (documented in docs/matching.md).

Rules:
- Everything compares normalised: lower case, ё→е, hyphens as spaces.
- Country: an alias table maps names, English names, adjectives and slang to the
  catalogue's Russian name ("США", "USA", "Штаты", "американское" → США). Unknown
  countries are compared as written.
- Grape: aliases map English names and synonyms to the Russian name ("Shiraz", "Шираз"
  → Сира). A grape matches when equal, or when the query is its first word(s)
  ("каберне" → Каберне Совиньон and Каберне Фран).
- Food: the query's words are stemmed and each must occur in one pairing ("стейк" finds
  "стейк из говядины", "рыбе" finds "рыба на гриле"). Broad words expand to their
  dishes ("мясо" also finds "стейк", "шашлык").
- Region: a case-insensitive substring of the region or the appellation, with a few
  English aliases ("Tuscany" → Тоскана).
"""

from __future__ import annotations

from sommelier.text import normalize, stem, words

_COUNTRY_ALIASES: dict[str, tuple[str, ...]] = {
    "Россия": (
        "россия",
        "рф",
        "russia",
        "российское",
        "российские",
        "русское",
        "отечественное",
        "наше",
        "кубань",
        "крым",
    ),
    "Франция": ("франция", "france", "французское", "французские", "франции"),
    "Италия": ("италия", "italy", "итальянское", "итальянские", "италии"),
    "Испания": ("испания", "spain", "испанское", "испанские", "испании"),
    "Португалия": ("португалия", "portugal", "португальское", "португалии"),
    "Германия": ("германия", "germany", "немецкое", "немецкие", "германии"),
    "Австрия": ("австрия", "austria", "австрийское", "австрии"),
    "Грузия": ("грузия", "georgia", "грузинское", "грузинские", "грузии", "сакартвело"),
    "Армения": ("армения", "armenia", "армянское", "армении"),
    "Аргентина": ("аргентина", "argentina", "аргентинское", "аргентинские", "аргентины"),
    "Чили": ("чили", "chile", "чилийское", "чилийские"),
    "США": (
        "сша",
        "usa",
        "us",
        "u s a",
        "united states",
        "америка",
        "америки",
        "американское",
        "американские",
        "штаты",
        "калифорния",
        "california",
    ),
    "ЮАР": ("юар", "south africa", "южная африка", "южноафриканское", "африка"),
    "Новая Зеландия": ("новая зеландия", "new zealand", "nz", "новозеландское", "новой зеландии"),
    "Австралия": ("австралия", "australia", "австралийское", "австралии"),
    "Венгрия": ("венгрия", "hungary", "венгерское", "венгрии"),
    "Греция": ("греция", "greece", "греческое", "греции"),
    "Молдова": ("молдова", "молдавия", "moldova", "молдавское"),
    "Абхазия": ("абхазия", "абхазское"),
}

_COUNTRY_BY_ALIAS: dict[str, str] = {
    normalize(alias): country for country, aliases in _COUNTRY_ALIASES.items() for alias in (*aliases, country)
}

_GRAPE_ALIASES: dict[str, tuple[str, ...]] = {
    "Каберне Совиньон": ("cabernet sauvignon", "каберне совиньон", "кабернет совиньон"),
    "Каберне Фран": ("cabernet franc",),
    "Мерло": ("merlot",),
    "Пино Нуар": ("pinot noir", "пино нуар", "шпетбургундер", "spatburgunder", "pinot nero", "пино неро"),
    "Пино Гриджио": ("pinot grigio", "pinot gris", "пино гри", "пино гриджо", "грауэрбургундер"),
    "Шардоне": ("chardonnay", "шардонне"),
    "Совиньон Блан": ("sauvignon blanc", "совиньон", "совиньон блан"),
    "Рислинг": ("riesling",),
    "Мальбек": ("malbec", "côt"),  # not "кот"/"cot": ordinary words in free text
    "Темпранильо": ("tempranillo", "тинта рориш", "tinta roriz", "тинто фино"),
    "Санджовезе": ("sangiovese",),
    "Неббиоло": ("nebbiolo",),
    "Сира": ("syrah", "shiraz", "шираз", "сира"),
    "Гренаш": ("grenache", "garnacha", "гарнача"),
    "Грюнер Вельтлинер": ("gruner veltliner", "grüner veltliner", "грюнер"),
    "Саперави": ("saperavi",),
    "Ркацители": ("rkatsiteli",),
    "Мускат": ("muscat", "moscato", "москато", "мускат"),
    "Гевюрцтраминер": ("gewurztraminer", "gewürztraminer", "траминер"),
    "Пинотаж": ("pinotage",),
    "Карменер": ("carmenere", "carménère"),
    "Зинфандель": ("zinfandel",),
    "Примитиво": ("primitivo",),
    "Альбариньо": ("albarino", "albariño", "алварину", "alvarinho"),
    "Шенен Блан": ("chenin blanc", "шенен"),
    "Глера": ("glera", "просекко", "prosecco"),
    "Гаме": ("gamay", "гамэ"),
    "Вердехо": ("verdejo",),
    "Пти Вердо": ("petit verdot",),
    "Фурминт": ("furmint",),
    "Ламбруско": ("lambrusco",),
    "Пино Менье": ("pinot meunier", "meunier", "менье"),
    "Мурведр": ("mourvedre", "mourvèdre", "монастрель", "monastrell", "mataro"),
    "Верментино": ("vermentino", "rolle"),
    "Сенсо": ("cinsault", "cinsaut", "сенсу"),
    "Кариньян": ("carignan", "carignano", "масуэло", "mazuelo", "cariñena"),
    "Грасиано": ("graciano",),
    "Пино Блан": ("pinot blanc", "pinot bianco", "вайсбургундер"),
    "Макабео": ("macabeo", "виура", "viura"),
    "Харшлевелю": ("harslevelu", "hárslevelű"),
    "Монтепульчано": ("montepulciano",),
    "Корвина": ("corvina",),
    "Вионье": ("viognier",),
    "Красностоп": ("красностоп золотовский", "krasnostop"),
    "Цимлянский черный": ("цимлянский", "tsimlyansky"),
}

_GRAPE_BY_ALIAS: dict[str, str] = {
    normalize(alias): grape for grape, aliases in _GRAPE_ALIASES.items() for alias in (*aliases, grape)
}

# Broad dish words a customer uses → the stems of the pairings they cover.
_FOOD_GROUPS: dict[str, tuple[str, ...]] = {
    "мяс": (
        "мяс",
        "стейк",
        "шашлык",
        "говядин",
        "баранин",
        "ягнят",
        "свинин",
        "свин",
        "барбекю",
        "дич",
        "бургер",
        "жарк",
        "телят",
        "кабан",
        "оленин",
        "хамон",
        "ребрышк",
        "колбас",
        "котлет",
        "утк",
        "гуляш",
        "рагу",
    ),
    "рыб": ("рыб", "лосос", "форел", "тунец", "дорадо", "сибас", "треск"),
    "морепродукт": (
        "морепродукт",
        "устриц",
        "мидии",
        "кревет",
        "краб",
        "гребеш",
        "кальмар",
        "омар",
        "лобстер",
        "икр",
        "осьминог",
        "лангустин",
    ),
    "птиц": ("птиц", "курица", "куриц", "утк", "утин", "индейк", "цыплен"),
    "десерт": ("десерт", "торт", "пирож", "выпечк", "фрукт", "шоколад", "мороженое"),
    "сыр": (
        "сыр",
        "пармезан",
        "пекорино",
        "сулугуни",
        "бри",
        "камамбер",
        "горгонзол",
        "рокфор",
        "чеддер",
        "моцарелл",
        "бурат",
        "маасдам",
        "гауд",
        "фет",
    ),
    "закуск": ("закуск", "аперитив", "канапе", "брускетт", "тапас"),
}

_REGION_ALIASES: dict[str, str] = {
    "tuscany": "тоскана",
    "toscana": "тоскана",
    "piedmont": "пьемонт",
    "piemonte": "пьемонт",
    "bordeaux": "бордо",
    "burgundy": "бургундия",
    "bourgogne": "бургундия",
    "champagne": "шампань",
    "rioja": "риоха",
    "mendoza": "мендоса",
    "napa": "напа",
    "mosel": "мозель",
    "kakheti": "кахетия",
    "veneto": "венето",
    "sicily": "сицилия",
    "marlborough": "мальборо",
}


def canonical_country(value: str) -> str:
    """The catalogue's name for a country the customer wrote in any usual way."""
    key = normalize(value)
    return _COUNTRY_BY_ALIAS.get(key, value.strip())


def country_keys(value: str) -> list[str]:
    """Normalised country names that satisfy the filter."""
    return [normalize(canonical_country(value))]


def grape_keys(value: str) -> list[str]:
    """Normalised grape names that satisfy the filter: every spelling of the grape's group.

    The caller also accepts each key as the first word(s) of a grape ("каберне" → Каберне Совиньон).
    """
    key = normalize(value)
    canonical = _GRAPE_BY_ALIAS.get(key)
    keys = [key]
    if canonical:
        keys += [alias for alias, grape in _GRAPE_BY_ALIAS.items() if grape == canonical]
    return list(dict.fromkeys(keys))


def food_patterns(value: str) -> list[list[str]]:
    """Alternatives of stem lists: a pairing matches an alternative when it contains every stem.

    "стейк из говядины" → [["стейк", "говядин"]]; "мясо" → [["мяс"], ["стейк"], ["шашлык"], ...].
    """
    stems = [stem(w) for w in words(value) if w not in {"к", "с", "из", "на", "под", "для", "и", "в"}]
    if not stems:
        return []
    alternatives = [stems]
    if len(stems) == 1:
        for group_stem, members in _FOOD_GROUPS.items():
            if stems[0].startswith(group_stem) or group_stem.startswith(stems[0]):
                alternatives.extend([[m] for m in members])
    unique: list[list[str]] = []
    for alt in alternatives:
        if alt not in unique:
            unique.append(alt)
    return unique


def region_key(value: str) -> str:
    key = normalize(value)
    return _REGION_ALIASES.get(key, key)


def known_countries() -> list[str]:
    return list(_COUNTRY_ALIASES)


def country_aliases() -> dict[str, str]:
    """Every alias (normalised) → canonical country; used by the offline query reader."""
    return dict(_COUNTRY_BY_ALIAS)


def grape_aliases() -> dict[str, str]:
    return dict(_GRAPE_BY_ALIAS)
