"""The two LLM tool definitions, verbatim from seeds/002 (OpenAI function-calling format)."""

SEARCH_WINES_TOOL = {
    "type": "function",
    "function": {
        "name": "search_wines",
        "description": "Поиск вин по структурированным критериям: тип, сладость, сорт винограда, цена, страна, регион, сочетаемость с блюдами. Используй когда пользователь указывает конкретные характеристики вина.",
        "parameters": {
            "type": "object",
            "properties": {
                "wine_type": {
                    "type": "string",
                    "enum": ["red", "white", "rose", "sparkling"],
                    "description": "Тип вина",
                },
                "sweetness": {
                    "type": "string",
                    "enum": ["dry", "semi_dry", "semi_sweet", "sweet"],
                    "description": "Сладость вина",
                },
                "grape_variety": {
                    "type": "string",
                    "description": "Сорт винограда (например: Мальбек, Каберне Совиньон, Рислинг)",
                },
                "price_min": {"type": "number", "description": "Минимальная цена в рублях"},
                "price_max": {"type": "number", "description": "Максимальная цена в рублях"},
                "country": {
                    "type": "string",
                    "description": "Страна производства (например: Аргентина, Италия, Россия)",
                },
                "region": {
                    "type": "string",
                    "description": "Регион производства (например: Тоскана, Мендоса)",
                },
                "food_pairing": {
                    "type": "string",
                    "description": "Блюдо для сочетания (например: стейк, рыба, сыр)",
                },
            },
            "required": [],
        },
    },
}

SEMANTIC_SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "semantic_search",
        "description": "Семантический поиск вин по описанию, настроению или вкусовым предпочтениям. Используй когда пользователь описывает вино абстрактно: 'лёгкое и освежающее', 'с нотами ванили', 'элегантное для ужина'.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Текстовое описание желаемого вина на естественном языке",
                },
                "wine_type": {
                    "type": "string",
                    "enum": ["red", "white", "rose", "sparkling"],
                    "description": "Дополнительный фильтр по типу вина (опционально)",
                },
                "price_max": {
                    "type": "number",
                    "description": "Дополнительный фильтр по максимальной цене (опционально)",
                },
            },
            "required": ["query"],
        },
    },
}

TOOLS = [SEARCH_WINES_TOOL, SEMANTIC_SEARCH_TOOL]
LLM_TOOL_NAMES = frozenset(tool["function"]["name"] for tool in TOOLS)
