"""Russian words for the catalogue enums, shared by rendering, embeddings and the offline responder."""

WINE_TYPE_RU = {"red": "красное", "white": "белое", "rose": "розовое", "sparkling": "игристое"}
SWEETNESS_RU = {"dry": "сухое", "semi_dry": "полусухое", "semi_sweet": "полусладкое", "sweet": "сладкое"}
