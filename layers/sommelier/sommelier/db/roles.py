"""The tool function's own LOGIN user, a member of the data-only role `sommelier_app` (migration 0002).

The migrate function (master credentials) calls `ensure_app_user` on every deploy with the user
name and password of the AppDatabaseSecret, so the tool function never holds DDL rights.

The password is sent as a SCRAM-SHA-256 verifier computed here (what psql's \\password does), so
the plain text never appears in a statement the server could log (log_statement, pg_stat_statements).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from typing import Any

import psycopg
from psycopg import sql

from sommelier.db.pool import first_row

APP_GROUP_ROLE = "sommelier_app"
SCRAM_ITERATIONS = 4096
_ROLE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def scram_sha256_verifier(password: str, *, salt: bytes | None = None, iterations: int = SCRAM_ITERATIONS) -> str:
    """PostgreSQL's stored form of a SCRAM-SHA-256 password (RFC 5802/7677).

    SASLprep is not applied: the generated passwords are printable ASCII, for which it is the identity.
    """
    salt = salt if salt is not None else os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode("ascii")

    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def ensure_app_user(conninfo: str, username: str, password: str, *, connect_timeout_s: float | None = None) -> bool:
    """Create (or update) LOGIN user `username` IN ROLE sommelier_app with `password`. True when created."""
    if not _ROLE_NAME.match(username or ""):
        raise ValueError("the app database user name must be 1-63 of a-z, 0-9 and _, starting with a letter or _")
    if not password or len(password) < 16:
        raise ValueError("the app database password must have at least 16 characters")
    verifier = sql.Literal(scram_sha256_verifier(password))
    user = sql.Identifier(username)
    options: dict[str, Any] = {"connect_timeout": max(2, int(connect_timeout_s))} if connect_timeout_s else {}
    with psycopg.connect(conninfo, autocommit=True, **options) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (username,)).fetchone() is not None
        attributes = sql.SQL("LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT PASSWORD {}")
        if exists:
            conn.execute(sql.SQL("ALTER ROLE {} WITH ").format(user) + attributes.format(verifier))
        else:
            conn.execute(sql.SQL("CREATE ROLE {} WITH ").format(user) + attributes.format(verifier))
        member = first_row(conn.execute("SELECT pg_has_role(%s, %s, 'MEMBER')", (username, APP_GROUP_ROLE)))[0]
        if not member:
            conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(APP_GROUP_ROLE), user))
    return not exists
