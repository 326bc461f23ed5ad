"""Photos a shop's file names by web address (`image_url`, a YML <picture>), fetched so that the file cannot
turn the import against the shop: http(s) only; the host resolved once and every address it resolves to
checked to be a public one (loopback, private, link-local, the cloud's metadata address, carrier-grade NAT,
multicast and reserved ranges are refused), the connection made to that checked address (so a second DNS
answer cannot point elsewhere), each redirect checked the same way, within a size cap, a per-operation
timeout and a deadline for the whole photo. A refused address is never contacted, so nothing a host inside
the shop's network would answer can reach the report; the report names only the address and why.

Written on http.client rather than urllib because urllib resolves the name again when it connects and
follows redirects on its own: neither leaves room to pin and check the address.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PHOTO_TIMEOUT_S = 10.0  # each connect and read
PHOTO_DEADLINE_S = 30.0  # one photo, redirects included
PHOTO_MAX_BYTES = 5 * 1024 * 1024  # Telegram's limit for photos it fetches by URL
PHOTO_MAX_REDIRECTS = 5
CONTENT_TYPES = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}
HOST_SKIPPED = "пропущено: сервер не ответил на предыдущее фото"
_REDIRECTS = {301, 302, 303, 307, 308}
_CHUNK = 64 * 1024

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]


class PhotoDownloadError(Exception):
    def __init__(self, reason: str, *, host_down: bool = False):
        super().__init__(reason)
        self.host_down = host_down  # the host itself can't be reached: skip its other photos


def resolve(host: str, port: int) -> list[str]:
    """Every address the name resolves to (the system resolver)."""
    return list(dict.fromkeys(str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)))


def why_not_public(address: IPAddress) -> str | None:
    """Why an address is not one a photo may be fetched from (None: a public address)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback or address.is_unspecified:
        return "адрес этого же компьютера"
    if address.is_link_local:
        return "внутренний адрес (link-local, служба метаданных облака)"
    if address.is_private:
        return "адрес частной сети"
    if address.is_multicast or address.is_reserved or not address.is_global:
        return "не публичный адрес"
    return None


class _PinnedHTTP(http.client.HTTPConnection):
    """An HTTP connection to the checked address, the Host header still the name."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """An HTTPS connection to the checked address; the certificate still checked against the name."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        context = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=context)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


@dataclass(frozen=True)
class PhotoFetcher:
    """Fetches one photo within the limits above. `trusted`: addresses taken as public (a test's stand-in for
    the web on loopback); empty in every real import."""

    timeout_s: float = PHOTO_TIMEOUT_S
    deadline_s: float = PHOTO_DEADLINE_S
    max_bytes: int = PHOTO_MAX_BYTES
    max_redirects: int = PHOTO_MAX_REDIRECTS
    resolver: Resolver = resolve
    trusted: frozenset[IPAddress] = field(default_factory=frozenset)

    def fetch(self, url: str) -> tuple[bytes, str, str]:
        """(bytes, content type, file name) of the photo at `url`, or PhotoDownloadError saying why not."""
        deadline = time.monotonic() + self.deadline_s
        current = url
        for _ in range(self.max_redirects + 1):
            parts, port = _checked_url(current)
            address = self._public_address(str(parts.hostname), port)
            connection = (_PinnedHTTPS if parts.scheme == "https" else _PinnedHTTP)(
                str(parts.hostname), port, address, self.timeout_s
            )
            try:
                location, body = self._get(connection, parts, deadline)
            except (OSError, http.client.HTTPException) as exc:
                reason = "нет ответа вовремя" if isinstance(exc, TimeoutError) else "не удалось соединиться"
                raise PhotoDownloadError(f"сервер недоступен ({reason})", host_down=True) from None
            finally:
                connection.close()
            if location is None:
                return body
            current = urllib.parse.urljoin(current, location)
        raise PhotoDownloadError(f"больше {self.max_redirects} перенаправлений")

    def _public_address(self, host: str, port: int) -> str:
        try:
            found = [ipaddress.ip_address(a.split("%", 1)[0]) for a in self.resolver(host, port)]
        except (OSError, ValueError, UnicodeError):
            raise PhotoDownloadError(f"адрес {host} не найден", host_down=True) from None
        if not found:
            raise PhotoDownloadError(f"адрес {host} не найден", host_down=True)
        for address in found:  # every address: a name resolving to one public and one inner address is refused
            why = None if address in self.trusted else why_not_public(address)
            if why:
                raise PhotoDownloadError(f"{host} ведёт на {address}: {why} — такие адреса не скачиваются")
        return str(found[0])

    def _get(
        self, connection: http.client.HTTPConnection, parts: urllib.parse.SplitResult, deadline: float
    ) -> tuple[str | None, tuple[bytes, str, str]]:
        """(the redirect's Location, or None and the photo)."""
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request("GET", target, headers={"User-Agent": "sommelier-catalog-import", "Accept": "image/*"})
        response = connection.getresponse()
        if response.status in _REDIRECTS:
            location = response.getheader("Location")
            if not location:
                raise PhotoDownloadError(f"HTTP {response.status} без адреса перенаправления")
            return location, (b"", "", "")
        if response.status != 200:
            raise PhotoDownloadError(f"HTTP {response.status}")
        content_type = (response.headers.get_content_type() or "").lower()
        if content_type not in CONTENT_TYPES:
            raise PhotoDownloadError("не картинка PNG, JPEG или WebP")
        declared = response.getheader("Content-Length") or ""
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise PhotoDownloadError(f"больше {self.max_bytes // (1024 * 1024)} МБ")
        data = bytearray()
        while len(data) <= self.max_bytes:
            if time.monotonic() > deadline:
                raise PhotoDownloadError(f"не скачалось за {self.deadline_s:g} с")
            chunk = response.read(_CHUNK)
            if not chunk:
                break
            data += chunk
        if len(data) > self.max_bytes:
            raise PhotoDownloadError(f"больше {self.max_bytes // (1024 * 1024)} МБ")
        if not data:
            raise PhotoDownloadError("пустой ответ")
        stem = Path(parts.path).stem or "photo"
        return None, (
            bytes(data),
            content_type,
            re.sub(r"[^A-Za-z0-9._-]+", "-", stem)[:80] + CONTENT_TYPES[content_type],
        )


def _checked_url(url: str) -> tuple[urllib.parse.SplitResult, int]:
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        raise PhotoDownloadError("адрес фото записан неверно") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise PhotoDownloadError("фото скачиваются только по http:// или https://")
    if not parts.hostname:
        raise PhotoDownloadError("в адресе фото нет сайта")
    return parts, port
