"""The tool function: its handler beside its SQL. The only code with database credentials."""
