"""What the operator commands share: the data ports, with a local database migrated first."""

from __future__ import annotations

from sommelier.store.adapters import Repositories


def operator_repositories() -> Repositories:
    """The deployed tool function when TOOL_FUNCTION_NAME is set; else in-process, the local schema made current."""
    from sommelier.settings import load_settings
    from sommelier.store.adapters import repositories_from_settings

    settings = load_settings()
    if not settings.tool_function_name:
        from sommelier.db.migrations import apply_migrations
        from sommelier.db.pool import default_database

        apply_migrations(default_database().conninfo)
    return repositories_from_settings(settings)
