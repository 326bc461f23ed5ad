"""Where the database is: DATABASE_URL, else the Lambda's database secret, else the embedded server."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from sommelier.settings import Settings

SECRET_CACHE_SECONDS = 300
# The RDS certificate authorities, put here by the layer's Makefile at build time (`sam build`).
RDS_CA_BUNDLE = Path(__file__).with_name("rds-ca-bundle.pem")
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")


def tls_parameters(mode: str = "verify-full") -> str:
    """libpq TLS settings for a database reached through its secret: DATABASE_SSLMODE (default
    verify-full: the server's certificate is checked against the RDS CA bundle, not only encrypted)."""
    if mode not in SSL_MODES:
        raise RuntimeError(f"DATABASE_SSLMODE must be one of {', '.join(SSL_MODES)} (got {mode!r})")
    if mode not in ("verify-ca", "verify-full"):
        return f"sslmode={mode}"
    if not RDS_CA_BUNDLE.is_file():
        raise RuntimeError(
            f"sslmode={mode} needs the RDS CA bundle at {RDS_CA_BUNDLE}: build the layer with `sam build` "
            "(layers/sommelier/Makefile downloads it), or set DATABASE_SSLMODE=require"
        )
    return f"sslmode={mode}&sslrootcert={quote(str(RDS_CA_BUNDLE), safe='/')}"


def url_from_secret(settings: Settings, secret_arn: str, *, fresh: bool = False) -> str:
    """Build a URL from a database secret (username/password) and the host env vars.
    `fresh` skips the cache: the password may have just changed."""
    from aws_lambda_powertools.utilities import parameters

    secret = parameters.get_secret(secret_arn, transform="json", max_age=SECRET_CACHE_SECONDS, force_fetch=fresh)
    if not isinstance(secret, dict) or "username" not in secret or "password" not in secret:
        raise RuntimeError("the database secret must be JSON with 'username' and 'password'")
    from sommelier.observability.redaction import register_secret

    register_secret(str(secret["password"]))  # masked in every log line from now on
    database = settings.database
    host = database.host or secret.get("host")
    if not host:
        raise RuntimeError("DATABASE_HOST is not set and the secret has no 'host'")
    port = database.port or str(secret.get("port") or 5432)
    name = database.name or secret.get("dbname") or "sommelier"
    user = quote(str(secret["username"]), safe="")
    password = quote(str(secret["password"]), safe="")
    return f"postgresql://{user}:{password}@{host}:{port}/{name}?{tls_parameters(database.sslmode)}"


def resolve_database_url(settings: Settings, *, fresh: bool = False) -> str:
    if settings.database.url:
        return settings.database.url
    if settings.database.secret_arn:
        return url_from_secret(settings, settings.database.secret_arn, fresh=fresh)
    from sommelier.db.embedded import ensure_embedded_database

    return ensure_embedded_database(settings.state_dir / "pgdata")
