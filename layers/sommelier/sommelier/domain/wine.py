"""The catalogue enums and their Russian words, shared by validation, rendering, embeddings and the
offline responder. Plain constants: the tool function imports them without pydantic."""

WINE_TYPES: tuple[str, ...] = ("red", "white", "rose", "sparkling")
SWEETNESS_LEVELS: tuple[str, ...] = ("dry", "semi_dry", "semi_sweet", "sweet")

WINE_TYPE_RU = {"red": "красное", "white": "белое", "rose": "розовое", "sparkling": "игристое"}
SWEETNESS_RU = {"dry": "сухое", "semi_dry": "полусухое", "semi_sweet": "полусладкое", "sweet": "сладкое"}
SWEETNESS_PLURAL_RU = {"dry": "сухие", "semi_dry": "полусухие", "semi_sweet": "полусладкие", "sweet": "сладкие"}
