"""What the operator commands share: the tool port, with a local database migrated first."""

from __future__ import annotations

from sommelier.tools.client import ToolClient


def operator_tools() -> ToolClient:
    """The deployed tool function when TOOL_FUNCTION_NAME is set; else in-process, the local schema made current."""
    from sommelier.config import load_settings
    from sommelier.tools.client import tools_from_settings

    settings = load_settings()
    if not settings.tool_function_name:
        from sommelier.db.migrations import apply_migrations
        from sommelier.db.pool import default_database

        apply_migrations(default_database().conninfo)
    return tools_from_settings(settings)
