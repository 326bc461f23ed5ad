"""The cheap pre-check (docs/architecture.md): obvious prompt injections and social engineering, before any LLM spend.

It fires on obvious attacks only. Ordinary wine questions that happen to say "система",
"роль", "инструкция по хранению" or "игнорировать танины" pass; subtler attacks are the
LLM's job (the guard block of the system prompt).

The text is normalised first: NFKC, lower case, ё→е, zero-width characters removed, and
look-alike letters folded both ways (Latin patterns see Cyrillic "о" as "o", Russian
patterns see Latin "o" as "о"), so "ignоre" and "игнoрируй" are still caught.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from typing import Literal, NamedTuple

from sommelier.domain.answer import SommelierResponse

AttackType = Literal["prompt_injection", "social_engineering"]


class GuardVerdict(NamedTuple):
    guard_type: AttackType
    reason: str


_ZERO_WIDTH = re.compile("[\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_CYR_TO_LAT = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "к": "k",
        "і": "i",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "ո": "n",
        "ɡ": "g",
    }
)
_LAT_TO_CYR = str.maketrans(
    {
        "a": "а",
        "e": "е",
        "o": "о",
        "p": "р",
        "c": "с",
        "y": "у",
        "x": "х",
        "k": "к",
        "m": "м",
        "t": "т",
        "h": "н",
        "b": "в",
        "u": "и",
        "n": "п",
    }
)


def _base(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    text = _ZERO_WIDTH.sub("", text).lower().replace("ё", "е")
    return re.sub(r"[ \t\u00a0]+", " ", text)


def _fold_words(text: str, table: dict[int, str], alphabet: str) -> str:
    """Fold look-alike letters inside mixed-alphabet words ("ignоre" with a Cyrillic о, "игнoрируй" with a Latin o)."""
    out = []
    for token in re.split(r"(\W+)", text):
        if token and re.search(r"[a-zа-я]", token) and re.search(r"[a-z]", token) and re.search(r"[а-я]", token):
            token = token.translate(table)
        elif token and alphabet == "latin" and re.fullmatch(r"[аеорсухкіјѕ]+", token):
            token = token.translate(table)  # a whole word of Cyrillic look-alikes, e.g. "сору"
        out.append(token)
    return "".join(out)


def _variants(text: str) -> tuple[str, str, str]:
    base = _base(text)
    latin = _fold_words(base, _CYR_TO_LAT, "latin")
    cyrillic = _fold_words(base, _LAT_TO_CYR, "cyrillic")
    compact = re.sub(r"[^a-zа-я0-9]", "", latin)
    return latin, cyrillic, compact


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# --------------------------------------------------------------------------- prompt injection

_EN_INJECTION: list[tuple[str, re.Pattern[str]]] = [
    (
        "override of instructions",
        _rx(
            r"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\b[\w\s,'’]{0,40}?\b(?:previous|prior|above|earlier|all|any|"
            r"your|the|these|those|system|initial|original)\b[\w\s,'’]{0,30}?\b(?:instructions?|prompts?|rules|directions|"
            r"guidelines|directives|messages|context|constraints|programming)\b"
        ),
    ),
    (
        "request for the system prompt",
        _rx(
            r"\b(?:reveal|show|print|display|output|repeat|leak|tell\s+me|give\s+me|write\s+out|share|dump)\b[\w\s,'’]{0,40}?"
            r"\b(?:system|initial|hidden|original|secret|full|your)\s+(?:prompt|instructions?|message|rules|configuration)"
        ),
    ),
    ("system prompt", _rx(r"\bsystem\s*prompt\b|\bsys\s*prompt\b|\bpre[- ]?prompt\b")),
    (
        "developer mode",
        _rx(r"\bdeveloper\s+mode\b|\bdev\s+mode\b|\bgod\s+mode\b|\bjail\s*break\w*|\bdo\s+anything\s+now\b"),
    ),
    (
        "DAN",
        _rx(
            r"\bdan\b[\s\w,]{0,20}\b(?:mode|jailbreak|prompt)\b|\b(?:you\s+are|act\s+as|become|be)\s+(?:a\s+)?dan\b|^\s*dan\s*:"
        ),
    ),
    (
        "role override",
        _rx(
            r"\byou\s+are\s+(?:now|no\s+longer)\b|\bfrom\s+now\s+on,?\s+you\b|\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|"
            r"different|evil|uncensored|new)\b|\bpretend\s+(?:to\s+be|you\s+are)\b[\w\s]{0,30}\b(?:without|no)\s+(?:rules|"
            r"restrictions|limits|filters)\b|\bno\s+(?:rules|restrictions|filters)\s+(?:apply|anymore)\b"
        ),
    ),
    (
        "fake role tag",
        _rx(
            r"(?m)^\s*(?:system|assistant|developer)\s*:|<\|\s*(?:im_start|im_end|system|endoftext|start_header_id)\s*\|>|"
            r"###\s*(?:system|instruction|new\s+instructions?)\b|\[/?inst\]|\[/?system\]|<</?sys>>|</?system>|"
            r"\{\{\s*system\s*\}\}"
        ),
    ),
    (
        "repeat the text above",
        _rx(
            r"\b(?:repeat|print|output|copy|return)\b[\w\s]{0,30}\b(?:text|words|everything|all)\s+(?:above|before\s+this|so\s+far)\b|"
            r"\bwhat\s+(?:is|was)\s+written\s+above\b|\bbeginning\s+of\s+(?:the|this)\s+(?:conversation|prompt)\b"
        ),
    ),
]

_RU_INJECTION: list[tuple[str, re.Pattern[str]]] = [
    (
        "override of instructions",
        _rx(
            r"(?:забудь|забудьте|игнорируй|игнорируйте|проигнорируй|проигнорируйте|отмени|отмените|отбрось|отбросьте|"
            r"не\s+обращай\s+внимания\s+на|не\s+слушай|сбрось|сбросьте|обойди|нарушь|отключи|сними|игнорировать)"
            r"(?:\s+(?:все|всё|свои|твои|ваши|эти|любые|прежние|предыдущие|прошлые|прошлую|данные|тебе|вам|системные|"
            r"изначальные|исходные|заданные|установленные|текущие|мне|про|о|свою|твою|все\s+свои)){0,4}\s+"
            r"(?:инструкци\w*|указани\w*|ограничени\w*|промпт\w*|установк\w*|директив\w*|настройк\w*|фильтр\w*|"
            r"системн\w+\s+(?:сообщени\w*|промпт\w*)|запрет\w*|програм+ировани\w*|правила(?=\s*(?:$|[.,!:;]|и\s)))"
            r"(?![\w])(?!\s+(?:по|на|к|для|хранени|подач|производител|на\s+этикетке)(?![\w]))"
        ),
    ),
    (
        "override of rules",
        _rx(
            r"(?:забудь|забудьте|игнорируй|игнорируйте|проигнорируй|не\s+соблюдай|нарушь|отмени)\s+"
            r"(?:все|всё|свои|твои|ваши|прежние|предыдущие|прошлые|системные)\s+(?:\w+\s+)?правил\w*"
        ),
    ),
    (
        "request for the system prompt",
        _rx(
            r"(?:покажи|покажите|выведи|выведите|напиши|напишите|раскрой|раскройте|скажи|скажите|повтори|повторите|"
            r"процитируй|распечатай|скопируй|перечисли|отправь|пришли|дай|какой|какие|каков)\s+(?:мне\s+|нам\s+)?"
            r"(?:(?:свой|свои|твой|твои|ваш|ваши|весь|все|всё|полный|полностью|дословно|исходный|изначальный|системный|"
            r"системные|скрытый|скрытые|секретный|секретные|начальные|внутренние|у\s+тебя)\s+){1,3}"
            r"(?:промпт\w*|prompt\w*|инструкци\w*|системн\w+\s+(?:сообщени\w*|промпт\w*|инструкци\w*)|указани\w*|"
            r"настройк\w*|правила|конфиг\w*|установк\w*)"
        ),
    ),
    (
        "system prompt",
        _rx(
            r"(?:системн\w+|исходн\w+|скрыт\w+|внутренн\w+)\s+(?:промпт\w*|prompt\w*)|(?:твой|свой|ваш|твоего|своего)\s+промпт\w*|"
            r"промпт\w*\s+(?:целиком|полностью|дословно)|какой\s+у\s+тебя\s+промпт|system\s*prompt"
        ),
    ),
    (
        "developer mode",
        _rx(
            r"режим\w*\s+(?:разработчика|разраба|бога|dan|без\s+ограничений|отладки|администратора)|"
            r"developer\s+mode|джейлбрейк\w*|джейл\s*брейк\w*"
        ),
    ),
    (
        "role override",
        _rx(
            r"(?:^|[\s,.!;:])(?:ты|вы)\s+(?:теперь|отныне|больше\s+не)\s+(?:не\s+)?(?:бот|ассистент|помощник|ии|ai|gpt|chatgpt|"
            r"модель|программа|хакер|пират|злой|злая|свободн\w*|без\s+ограничений|друг\w*\s+(?:ии|бот|ассистент|модель)|"
            r"нов\w+\s+(?:ии|бот|ассистент|модель|персонаж)|dan|разработчик|администратор|linux|линукс|терминал|"
            r"переводчик|учитель|программист|сомелье\b(?=\s*(?:[.,!]|$)))|"
            r"(?:теперь|отныне)\s+ты\s+(?:не\s+)?(?:бот|ассистент|ии|ai|gpt|dan|хакер|злой|свободн\w*|без\s+ограничений|"
            r"разработчик|администратор|терминал|linux|линукс|программист|другой|другая)|"
            r"(?:представь|представьте|вообрази),?\s+что\s+(?:ты|вы)\s+(?:\w+\s+){0,3}(?:без\s+(?:ограничений|правил|"
            r"цензуры|фильтров)|не\s+(?:сомелье|бот|ассистент))|"
            r"(?:выйди|выйти|выйдите)\s+из\s+(?:своей\s+)?роли|(?:смени|поменяй|смените)\s+(?:свою\s+)?роль|"
            r"(?:твоя|ваша)\s+новая\s+роль|новая\s+роль\s*[:—-]|перестань\s+быть\s+сомелье|ты\s+больше\s+не\s+сомелье"
        ),
    ),
    (
        "fake role tag",
        _rx(
            r"(?m)^\s*(?:система|системное\s+сообщение|system|ассистент|assistant)\s*:|\[\s*система\s*\]|###\s*(?:система|инструкци\w*)"
        ),
    ),
    (
        "repeat the text above",
        _rx(
            r"(?:повтори|повторите|выведи|выведите|перепиши|скопируй|процитируй)\s+(?:мне\s+)?(?:дословно\s+)?"
            r"(?:весь\s+|всё\s+|все\s+)?(?:текст|сообщени\w*|что\s+(?:написано|было)|то,?\s+что\s+(?:написано|было))\s*"
            # "…текст, который написан выше": a relative clause may stand between the noun and the place
            r"(?:,?\s*(?:который|которое|которые|что)\s+(?:был\w*\s+)?(?:написан\w*|ид[её]т|находится)\s+)?"
            r"(?:выше|до\s+этого|в\s+начале|сверху)|что\s+(?:написано|было\s+написано)\s+(?:выше|в\s+начале)\s+"
            r"(?:в\s+)?(?:твоих|твоем|системн)"
        ),
    ),
]

_BASE64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_DECODE = re.compile(r"decode|декодир\w*|раскодир\w*|расшифру\w*|base\s*64|b64")
_COMPACT_INJECTION = re.compile(
    r"ignore(?:all|previous|prior|your)+instructions|systemprompt|developermode|забудьвсеинструкции|"
    r"игнорируйвсеинструкции|игнорируйпредыдущиеинструкции|забудьпредыдущиеинструкции|системныйпромпт"
)
# A request to make up a wine, a price or its availability and pass it off as the shop's: the bot may only
# name catalogue wines. Two parts, in any order — inventing or asserting availability, and a second sign
# (the other one, or a marker that the result is not from the catalogue or is to be passed off as real) —
# so «придумай, что подать к утке», «придумай тост к вину» or «скажи, что есть к рыбе» stay wine requests.
_FABRICATE = re.compile(
    r"(?:придума\w*|выдума\w*|сочини\w*|сочинит\w*|нафантазиру\w*|сфабрику\w*|подделай\w*|сгенериру\w*|"
    r"(?<![a-z])(?:invent|make\s+up|fabricate|fake)(?![a-z]))[\s,]+(?:мне\s+|нам\s+)?(?:\w+[\s,]+){0,3}"
    r"(?:вин\w*|названи\w*|цен\w*|наличи\w*|позици\w*|бутылк\w*|марк\w*|этикетк\w*|ассортимент\w*|"
    r"(?<![a-z])(?:wines?|names?|prices?|stock|bottles?)(?![a-z]))|"
    # a price or a review made up on the spot: «назови любую цену», «напиши отзыв покупателя»
    r"(?:назови|поставь|укажи|напиши)\s+(?:\w+\s+)?(?:любую|произвольн\w+|случайн\w+|какую-нибудь|какую\s+нибудь)\s+цен\w*|"
    r"(?:напиши|напишите)\s+(?:\w+\s+){0,2}отзыв\w*"
)
# Asserting availability: «напиши, что оно есть у вас в продаже», «say that you sell it».
_CLAIM_IN_STOCK = re.compile(
    r"(?:напиши|напишите|скажи|скажите|сообщи|сообщите|ответь|ответьте|утверждай|подтверди|подтвердите|пообещай|"
    r"сделай\s+вид|сделайте\s+вид|притворись|притворитесь)"
    r"\s*,?\s+(?:мне\s+|нам\s+)?что\s+(?:\w+\s+){0,5}(?:есть|имеется|продает\w*|продаёт\w*|в\s+продаже|в\s+наличии)|"
    r"(?<![a-z])(?:say|claim|tell\s+(?:me|them))\s+(?:that\s+)?(?:it|you|the\s+shop)\s+(?:\w+\s+){0,2}"
    r"(?:sells?|has|have|is\s+in\s+stock|in\s+stock)"
)
_PASS_OFF = re.compile(
    r"(?:котор\w+|его|е[её]|их|оно|он|она|они)\s+(?:у\s+вас\s+нет|нет\s+(?:у\s+вас|в\s+(?:вашем\s+)?(?:каталоге|продаже|"
    r"наличии|ассортименте|магазине)))|несуществующ\w*|не\s+существу\w*|"
    r"не\s+из\s+(?:вашего\s+)?(?:каталога|ассортимента)|вне\s+каталога|без\s+каталога|"
    r"не\s+(?:ищи|ищите|смотри|смотрите|заглядывай|проверяй|проверяйте|открывай)\s+(?:в\s+)?(?:каталог\w*|базу|ассортимент\w*)|"
    r"выда\w*\s+(?:\w+\s+){0,3}за\s+(?:ваш\w*|наш\w*|сво\w*|настоящ\w*|реальн\w*|существующ\w*)|"
    r"даже\s+если\s+(?:\w+\s+){0,3}нет|(?:как\s+будто|будто)(?:\s+бы)?\s+(?:\w+\s+){0,3}(?:есть|существу\w*|продает\w*|"
    r"в\s+продаже|в\s+наличии|ваш\w*)|(?:сделай\w*\s+вид|притвори\w+)\s*,?\s+что|"
    r"фейков\w*|фальшив\w*|поддельн\w*|вымышленн\w*|"
    r"(?<![a-z])(?:not\s+in\s+(?:the\s+|your\s+)?(?:catalog\w*|stock|shop)|doesn'?t\s+exist|does\s+not\s+exist|"
    r"fictional|pass\s+(?:it\s+)?off|pretend\s+(?:it|that|you)\s+(?:\w+\s+){0,2}(?:sell|have|has|stock|exist)\w*)(?![a-z])"
)

# --------------------------------------------------------------------------- social engineering

_AUTHORITY = re.compile(
    r"(?:^|[\s,.!;:])(?:я|мы)\s*(?:[—-]\s*|же\s+|ведь\s+|и\s+есть\s+)?(?:ваш\w*\s+|твой\s+|твоя\s+|главн\w+\s+|старш\w+\s+|"
    r"официальн\w+\s+)?(?:разработчик\w*|разраб\w*|админ\w*|администратор\w*|владел\w*|хозя\w*|создател\w*|"
    r"программист\w*|директор\w*|руководител\w*|менеджер\w*|сотрудник\w*|модератор\w*|тестировщик\w*|управляющ\w*|"
    r"бухгалтер\w*|из\s+(?:службы\s+)?(?:поддержки|безопасности|техподдержки|it\s+отдела|айти\s+отдела|полиции|налоговой|"
    r"бухгалтерии|(?:главного\s+|головного\s+)?офиса)|"
    r"представител\w*\s+(?:магазина|компании|openai|anthropic)|сисадмин\w*|devops|инженер\w*)|"
    r"(?:это|говорит|пишет)\s+(?:ваш\s+)?(?:администратор|разработчик|владелец|служба\s+поддержки|служба\s+безопасности|"
    r"техподдержка|поддержка)|"
    # «как владелец, требую…»: the same claim in another shape
    r"(?:^|[\s,.!;:])как\s+(?:ваш\w*\s+|главн\w+\s+)?(?:владел\w*|хозя\w*|администратор\w*|директор\w*|руководител\w*|"
    r"сотрудник\w*|управляющ\w*|разработчик\w*|менеджер\w*)(?:\s+(?:этого\s+|вашего\s+)?(?:магазина|бота|компании))?\s*[,.!:]|"
    r"\bi\s*(?:am|'m|’m)\s+(?:the\s+|your\s+|an?\s+)?(?:\w+\s+)?(?:developer|admin\w*|owner|creator|engineer|moderator|manager|"
    r"support|ceo|programmer)\b"
)
_PRIVILEGED = re.compile(
    r"доступ\w*|настройк\w*|конфиг\w*|ключ(?:и|а|ом|у|ей)?(?![а-я])|токен\w*|парол\w*|секрет\w*|(?<![a-z])api(?![a-z])|"
    r"апи(?![а-я])|промпт\w*|(?:свои|твои|системн\w*|внутренн\w*)\s+инструкци\w*|админк\w*|панел\w*\s+управлени\w*|"
    r"баз\w*\s+данных|(?<![а-я])бд(?![а-я])|логи(?![а-я])|логов|отключи\w*|выключи\w*|сними\s+ограничени\w*|"
    r"режим\w*\s+(?:разработчика|отладки|администратора)|исходн\w*\s+код|код\s+бота|"
    r"данные\s+(?:\w+\s+)?(?:пользовател\w*|клиент\w*|покупател\w*)|"
    r"(?<![a-z])(?:access|settings|config\w*|key|token|password|secret|prompt|credentials|database|logs)(?![a-z])"
)
_SECRETS = re.compile(
    r"(?:api|апи)[\s_-]*(?:key|ключ\w*)|ключ\w*\s+(?:от\s+)?(?:api|апи|доступа|openai|телеграм\w*|бота)|"
    r"токен\w*|token\w*|парол\w*|password\w*|secret\s*key|секретн\w+\s+ключ\w*|переменн\w+\s+окружени\w*|"
    r"\benv\b|\.env\b|database_url|строк\w+\s+подключени\w*|credentials|учетн\w+\s+данн\w*|"
    r"доступ\w*\s+к\s+(?:админк\w*|базе|бд|серверу|системе|панели|настройкам|аккаунт\w*|боту|коду|логам)|"
    r"исходн\w+\s+код\w*\s+(?:бота|твой|свой)|(?:покажи|дай|выведи)\s+(?:мне\s+)?(?:свой\s+|твой\s+)?конфиг\w*"
)
_SECRET_REQUEST = re.compile(
    r"(?:дай|дайте|покажи|покажите|скажи|скажите|пришли|пришлите|скинь|скиньте|выведи|выведите|отправь|отправьте|"
    r"напиши|напишите|сообщи|сообщите|нужен|нужна|нужны|предоставь|предоставьте|открой|откройте|выдай|выдайте|какой|"
    r"какие|give|show|send|tell|print|reveal|what\s+is|share)"
)
_DISCOUNT = re.compile(
    r"(?:дай|дайте|сделай|сделайте|оформи|оформите|начисли|начислите|выдай|выдайте|пришли|пришлите|сгенерируй|"
    r"создай|активируй|примени|скинь|придумай|выдумай|give|generate)\s+(?:мне\s+|нам\s+)?(?:\w+\s+){0,2}"
    r"(?:скидк\w*|промокод\w*|купон\w*|бонус\w*|discount|promo\s*code|coupon)"
)
_CLAIMED_PROMISE = re.compile(
    r"мне\s+(?:сказали|обещали|говорили|положено|полагается)|(?:менеджер|администратор|консультант|продавец|"
    r"директор|поддержка|оператор)\w*\s+(?:сказал\w*|обещал\w*|разрешил\w*|подтвердил\w*)|по\s+распоряжению|"
    r"как\s+сотрудник\w*|для\s+сотрудник\w*|я\s+постоянн\w+\s+клиент\w*\s*,?\s*(?:так\s+что|поэтому)|"
    r"\d{2}\s*%|сто\s+процентов|100\s*%|бесплатн\w*"
)
_FREE_ORDER = re.compile(
    r"(?:сделай|сделайте|оформи|оформите|закажи|закажите|отправь|отправьте|пришли|пришлите|доставь|доставьте|"
    r"отгрузи|выдай|спиши|оплати)\s+(?:\w+\s+){0,5}(?:бесплатно|даром|за\s+(?:(?:ваш|свой)\s+)?сч[её]т(?:\s+магазина)?|"
    r"без\s+оплаты|в\s+долг|за\s+0|за\s+ноль|free)|"
    r"(?:бесплатно|даром|без\s+оплаты)\s+(?:\w+\s+){0,3}(?:оформи|закажи|отправь|пришли|доставь|сделай)"
)
_OTHER_USERS = re.compile(
    r"(?:данные|телефон\w*|номер\w*|адрес\w*|заказ\w*|истори\w*|переписк\w*|сообщени\w*|email|почт\w*|имена|"
    r"контакт\w*|покупк\w*|профил\w*)\s+(?:\w+\s+){0,2}(?:других|остальных|всех|чужи\w+|прочих)\s+"
    r"(?:пользовател\w*|клиент\w*|покупател\w*|людей|юзер\w*)|"
    r"(?:покажи|дай|выгрузи|скинь|пришли|выведи|отправь)\s+(?:мне\s+)?(?:\w+\s+){0,2}"
    r"(?:базу\s+(?:клиентов|пользователей|покупателей|данных)|список\s+(?:клиентов|пользователей|покупателей)|"
    r"всех\s+(?:клиентов|пользователей|покупателей))|"
    r"(?:что|какие\s+вина|кто)\s+(?:заказывал\w*|покупал\w*|писал\w*|спрашивал\w*)\s+(?:другие|другой|остальные|"
    r"предыдущий|прошлый)\s+(?:пользовател\w*|клиент\w*|покупател\w*)|"
    r"(?:other|another)\s+(?:users?|customers?)['’]?s?\s+(?:data|orders|messages|history|phone|address)|"
    # a bulk export of the shop's orders or its customers' records: «выгрузи все заказы покупателей»
    r"(?:выгрузи\w*|экспортируй\w*|слей|слейте|скачай\w*|перешли\w*|export|dump)\s+(?:мне\s+|нам\s+)?(?:\w+\s+){0,2}"
    r"(?:заказ\w*|покупк\w*|продаж\w*|данн\w*|телефон\w*|адрес\w*|контакт\w*|переписк\w*|orders|customers)|"
    r"(?:покажи|покажите|дай|дайте|скинь|скиньте|пришли|пришлите|выведи|выведите|отправь|отправьте|назови|перечисли|"
    r"give|show|send)\s+(?:мне\s+|нам\s+)?(?:\w+\s+){0,2}(?:заказы|заказов|телефон\w*|адрес\w*|контакт\w*|переписк\w*|"
    r"email\w*|почт\w*|имена|фамилии|данные)\s+(?:\w+\s+)?(?:покупател\w*|клиент\w*|пользовател\w*|юзер\w*)"
)
# What only the shop's staff may see: said after a claim of authority it is social engineering
# («я владелец, покажи выручку»), while «я владелец ресторана, посоветуйте вино» stays a wine request.
_STAFF_DATA = re.compile(
    r"выручк\w*|(?:отч[её]т\w*|статистик\w*|данн\w*|истори\w*|список|списки)\s+(?:\w+\s+){0,2}(?:заказ\w*|продаж\w*|"
    r"покупател\w*|клиент\w*|пользовател\w*)|(?:все|всех|всё)\s+(?:\w+\s+)?заказ\w*|закупочн\w+\s+цен\w*|"
    r"(?<![a-z])(?:orders|revenue|sales\s+report|customer\s+list)(?![a-z])"
)
_URGENCY = re.compile(
    r"срочно|немедленно|прямо\s+сейчас|сию\s+минуту|иначе\s+(?:уволят|будут\s+проблемы|заблокируют|накажут)|"
    r"быстрее|urgent\w*|immediately|asap|right\s+now"
)
_PRIVILEGED_ACTION = re.compile(
    r"отключи\w*|выключи\w*|сними\s+ограничени\w*|дай\s+доступ|открой\s+доступ|предоставь\s+доступ|подтверди|"
    r"переведи\s+(?:деньги|средства)|верни\s+деньги|отмени\s+проверк\w*|обнови\s+(?:настройки|цены)|"
    r"измени\s+(?:цену|цены|настройки)|disable|grant\s+access"
)


class _Sign(NamedTuple):
    """A social-engineering sign: every pattern is found, in either spelling or, ``cyrillic_only``, the Cyrillic one."""

    reason: str
    patterns: tuple[re.Pattern[str], ...]
    cyrillic_only: bool = False


# Claims of authority or promises used to get something privileged, in the order they are checked.
_SOCIAL_SIGNS = (
    _Sign("a claim of authority with a request for privileged access", (_AUTHORITY, _PRIVILEGED)),
    _Sign("a claim of authority with a request for the shop's data", (_AUTHORITY, _STAFF_DATA)),
    _Sign("a request for credentials or internal access", (_SECRETS, _SECRET_REQUEST)),
    _Sign("a demand for a discount or promo code", (_DISCOUNT,)),
    _Sign("a request for a free order", (_FREE_ORDER,), cyrillic_only=True),
    _Sign("a request for other customers' data", (_OTHER_USERS,)),
    _Sign("urgency used to push a privileged action", (_URGENCY, _PRIVILEGED_ACTION), cyrillic_only=True),
)


def precheck(text: str) -> GuardVerdict | None:
    """A verdict for an obvious attack; None for everything else (including all ordinary wine talk)."""
    if not text or not text.strip():
        return None
    latin, cyrillic, compact = _variants(text)
    return _social_engineering(latin, cyrillic) or _prompt_injection(text, latin, cyrillic, compact)


def _found(pattern: re.Pattern[str], *spellings: str) -> bool:
    """True when the pattern matches one of the text's spellings (tried in the order given)."""
    return any(pattern.search(spelling) for spelling in spellings)


def _social_engineering(latin: str, cyrillic: str) -> GuardVerdict | None:
    """The first social-engineering sign in the text; checked before prompt injection."""
    for sign in _SOCIAL_SIGNS:
        spellings = (cyrillic,) if sign.cyrillic_only else (cyrillic, latin)
        if all(_found(pattern, *spellings) for pattern in sign.patterns):
            return GuardVerdict("social_engineering", sign.reason)
    return None


def _prompt_injection(text: str, latin: str, cyrillic: str, compact: str) -> GuardVerdict | None:
    """The first prompt-injection sign: English patterns on the Latin spelling, Russian on the Cyrillic one,
    then a request to make things up, an obfuscated override and an encoded payload."""
    for reason, pattern in _EN_INJECTION:
        if pattern.search(latin):
            return GuardVerdict("prompt_injection", reason)
    for reason, pattern in _RU_INJECTION:
        if pattern.search(cyrillic):
            return GuardVerdict("prompt_injection", reason)
    if _asks_to_fabricate(latin, cyrillic):
        return GuardVerdict("prompt_injection", "a request to invent a wine, a price or its availability")
    if _COMPACT_INJECTION.search(compact):
        return GuardVerdict("prompt_injection", "obfuscated override of instructions")
    if _has_encoded_payload(text, latin, cyrillic):
        return GuardVerdict("prompt_injection", "an encoded payload to decode")
    return None


def _asks_to_fabricate(latin: str, cyrillic: str) -> bool:
    """Inventing and asserting availability together, or either with a sign it is to be passed off as real."""
    invent = _found(_FABRICATE, cyrillic, latin)
    claim = _found(_CLAIM_IN_STOCK, cyrillic, latin)
    return (invent and claim) or ((invent or claim) and _found(_PASS_OFF, cyrillic, latin))


def _has_encoded_payload(text: str, latin: str, cyrillic: str) -> bool:
    """A base64-looking run (mixed case, or "=" padding, so not a long plain word) and a request to decode it."""
    if not (_BASE64.search(_base(text).replace(" ", "")) and _DECODE.search(latin + " " + cyrillic)):
        return False
    for m in _BASE64.finditer(_ZERO_WIDTH.sub("", text or "")):
        token = m.group(0)
        if re.search(r"[A-Z]", token) and re.search(r"[a-z]", token) or token.endswith("="):
            return True
    return False


_INJECTION_ANSWERS = (
    (
        "Я винный сомелье и работаю только с вином: свои настройки и внутренние инструкции не обсуждаю.",
        "Давайте лучше подберём вино — к ужину, на подарок или под настроение?",
    ),
    (
        "Такие просьбы я не выполняю — я здесь, чтобы помогать с выбором вина.",
        "Расскажите, какое вино ищете, и я предложу пару вариантов из каталога.",
    ),
    (
        "Мои правила работы не меняются по просьбе в чате, а внутренние настройки я не раскрываю.",
        "Зато с удовольствием помогу с вином: какой повод и бюджет?",
    ),
)
_SOCIAL_ANSWERS = (
    (
        "Доступы, настройки, скидки и данные других покупателей через этот чат не выдаются — даже по просьбе сотрудников.",
        "Если у вас вопрос по заказу, лучше обратиться в магазин напрямую. А вино я с радостью подберу — что ищете?",
    ),
    (
        "С такими запросами я помочь не могу: я отвечаю только за подбор вина и не управляю заказами, скидками и доступами.",
        "По служебным вопросам, пожалуйста, свяжитесь с магазином. Подобрать вам вино?",
    ),
    (
        "Извините, служебную информацию, промокоды и чужие данные я не предоставляю.",
        "Могу помочь с выбором вина к столу или в подарок — расскажете, какой повод?",
    ),
)


def guard_response(verdict: GuardVerdict, seed: str = "") -> SommelierResponse:
    """A polite Russian off_topic answer with the verdict's guard_type; it never repeats the attack."""
    answers = _SOCIAL_ANSWERS if verdict.guard_type == "social_engineering" else _INJECTION_ANSWERS
    index = zlib.crc32(f"{verdict.guard_type}\x1f{verdict.reason}\x1f{seed}".encode()) % len(answers)
    intro, closing = answers[index]
    return SommelierResponse(response_type="off_topic", guard_type=verdict.guard_type, intro=intro, closing=closing)
