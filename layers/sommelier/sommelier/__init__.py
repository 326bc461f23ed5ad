"""sommelier: an AI wine sommelier for Telegram, serverless on AWS."""

__version__ = "0.1.0"  # pyproject.toml reads it (the one place the version lives)
