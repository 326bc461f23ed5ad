"""PostgreSQL with pgvector: the connection pool, the URL and credentials, migrations, the embedded server."""
