"""What the operator commands share: the settings (built once by `main`) and the data ports, with a local
database migrated first."""

from __future__ import annotations

import threading

from sommelier.db.pool import Database
from sommelier.repositories.adapters import Repositories
from sommelier.settings import Settings


class CliContext:
    """One command's settings and, when it needs one, its database (opened once, closed by `main`)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._database: Database | None = None
        self._lock = threading.Lock()

    @property
    def database(self) -> Database:
        """The local database (DATABASE_URL or the embedded server), migrated to the current schema."""
        with self._lock:
            if self._database is None:
                from sommelier.db.migrations import apply_migrations
                from sommelier.db.url import resolve_database_url

                url = resolve_database_url(self.settings)
                apply_migrations(url)  # before the pool: it needs the vector type
                self._database = Database(url, self.settings.database)
            return self._database

    def repositories(self) -> Repositories:
        """The deployed tool function when TOOL_FUNCTION_NAME is set; else in-process on the local database."""
        from sommelier.repositories.adapters import in_process_repositories, lambda_repositories

        if self.settings.aws.tool_function_name:
            return lambda_repositories(self.settings.aws.tool_function_name)
        return in_process_repositories(self.database)

    def close(self) -> None:
        with self._lock:
            if self._database is not None:
                self._database.close()
                self._database = None
