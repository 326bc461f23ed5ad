"""The answers without wines: a greeting, thanks, help, an off-topic reply, a tool error's apology, and a
question back when a yes offered nothing concrete."""

from __future__ import annotations

from sommelier.domain.answer import SommelierResponse
from sommelier.offline.wording import pick


def clarify(query: str) -> SommelierResponse:
    """A yes to a question that offered nothing concrete: ask what to look for instead of guessing."""
    intro = pick(
        [
            "С удовольствием! Подскажите только, что поменять или уточнить — и я сразу подберу.",
            "Хорошо! Уточните, пожалуйста, что именно поискать.",
        ],
        query,
        "clarify",
    )
    closing = "Например: цвет и сладость, бюджет («до 2000»), страну или сорт, блюдо («к утке») или повод."
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)


def greeting(query: str) -> SommelierResponse:
    intro = pick(
        [
            "Здравствуйте! Я винный сомелье нашего магазина и помогу выбрать вино к ужину, на подарок или под настроение.",
            "Добрый день! Подберу вино из нашего каталога: по цвету и сладости, к блюду, по поводу или в рамках бюджета.",
            "Привет! Я помогаю выбрать вино — расскажите, что за повод, и я предложу пару-тройку бутылок из каталога.",
        ],
        query,
        "greeting",
    )
    closing = pick(
        [
            "Что будем искать: вино к ужину, на праздник или просто на вечер?",
            "Какой повод и на какой бюджет ориентируемся?",
            "Красное, белое, розовое или игристое — с чего начнём?",
        ],
        query,
        "greeting-closing",
    )
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)


def thanks(query: str) -> SommelierResponse:
    intro = pick(
        [
            "Пожалуйста! Приятного вечера и хорошего вина.",
            "Всегда пожалуйста, обращайтесь!",
            "Рады помочь! Надеюсь, вино понравится.",
        ],
        query,
        "thanks",
    )
    closing = pick(
        [
            "Если захочется подобрать что-то ещё — просто напишите.",
            "Понадобится вино к другому случаю — я здесь.",
        ],
        query,
        "thanks-closing",
    )
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)


def help_answer(query: str) -> SommelierResponse:
    intro = (
        "Я помогаю выбрать вино из каталога нашего магазина. Напишите, что ищете: цвет и сладость, бюджет "
        "(«до 2000»), страну или сорт, блюдо («к стейку») или повод («на летний вечер», «в подарок»), "
        "а после ответа можно попросить «подешевле», «а белое?» или «ещё»."
    )
    closing = pick(
        [
            "Ещё могу объяснить винные термины — например, что такое танины или терруар. С чего начнём?",
            "Могу и просто рассказать о вине: что такое декантация, как хранить бутылки. Что вам интересно?",
        ],
        query,
        "help",
    )
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)


def off_topic(query: str) -> SommelierResponse:
    intro = pick(
        [
            "Я винный сомелье и разбираюсь только в вине, так что с этим вопросом помочь не смогу.",
            "С этим, увы, не помогу: я здесь, чтобы подбирать вино и рассказывать о нём.",
            "Это немного не по моей части — я специализируюсь на вине из нашего каталога.",
        ],
        query,
        "off",
    )
    closing = pick(
        [
            "Зато могу подобрать вино к ужину, на подарок или под настроение — что ищете?",
            "Давайте лучше подберём вино: какой повод?",
            "Если нужно вино к столу или в подарок — расскажите, подберу.",
        ],
        query,
        "off-closing",
    )
    return SommelierResponse(response_type="off_topic", guard_type="off_topic", intro=intro, closing=closing)


def tool_error(query: str) -> SommelierResponse:
    intro = pick(
        [
            "Простите, сейчас не получается заглянуть в каталог: поиск вин временно недоступен.",
            "Извините, каталог вин сейчас не отвечает, и я не хочу советовать наугад.",
        ],
        query,
        "error",
    )
    return SommelierResponse(
        response_type="informational",
        intro=intro,
        closing="Попробуйте, пожалуйста, повторить запрос через минуту.",
    )
