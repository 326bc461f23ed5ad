"""A shop's file cannot turn the import against the shop through its photo addresses (issue 39, item 4):
`image_url` to 127.0.0.1, to a private or metadata address, and a redirect from an allowed server into
loopback are refused before any connection to them; the report names the address and never what that
host would answer. Real HTTP servers on loopback: 127.0.0.2 stands for "the web" (the test's fetcher
trusts that one address), 127.0.0.1 for a service inside the shop's network."""

from __future__ import annotations

import http.server
import ipaddress
import json
import threading
from pathlib import Path

import pytest
from sommelier.catalog.importer import import_catalog
from sommelier.catalog.photo_fetch import PhotoDownloadError, PhotoFetcher, why_not_public
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.photos.store import LocalPhotoStore
from sommelier_dev.memory import memory_repositories

SECRET = b"INNER-SERVICE-ANSWER-do-not-leak"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\x00" * 64
WEB = ipaddress.ip_address("127.0.0.2")


class Server:
    """A real HTTP server: /photo.png a PNG, /secret an inner service's answer (as an image, to be stored if it
    ever were fetched), /to?url=… a redirect."""

    def __init__(self, host: str):
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the standard library's name
                hits.append(self.path)
                if self.path == "/photo.png":
                    self._send(200, "image/png", PNG)
                elif self.path.startswith("/to?url="):
                    self.send_response(302)
                    self.send_header("Location", self.path.removeprefix("/to?url="))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self._send(200, "image/png", SECRET)

            def _send(self, status, content_type, body):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers():
    web, inner = Server(str(WEB)), Server("127.0.0.1")
    yield web, inner
    web.close()
    inner.close()


def wine(name: str, sku: str, image_url: str) -> dict:
    return {"name": name, "sku": sku, "wine_type": "red", "sweetness": "dry", "price_rub": 900, "image_url": image_url}


def run(tmp_path: Path, items: list[dict]):
    (tmp_path / "photos.json").write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    repositories = memory_repositories()
    report = import_catalog(
        tmp_path / "photos.json",
        catalog=repositories.catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(tmp_path / "store"),
        photo_fetcher=PhotoFetcher(trusted=frozenset({WEB})),
    )
    stored = {w.name: w.image_key for w in repositories.catalog.export_wines(include_unavailable=True)}
    return report, stored


def test_loopback_and_a_redirect_into_it_are_refused_and_nothing_of_theirs_is_stored(servers, tmp_path):
    web, inner = servers
    report, stored = run(
        tmp_path,
        [
            wine("С сайта", "A", f"{web.url}/photo.png"),
            wine("Локальный", "B", f"{inner.url}/secret"),
            wine("Перенаправление", "C", f"{web.url}/to?url={inner.url}/secret"),
            wine("Localhost", "D", f"http://localhost:{inner.server.server_address[1]}/secret"),
        ],
    )
    assert report.inserted == 4 and report.photos_uploaded == 1
    assert stored["С сайта"] is not None
    assert (tmp_path / "store" / stored["С сайта"]).read_bytes() == PNG
    assert all(stored[name] is None for name in ("Локальный", "Перенаправление", "Localhost"))
    assert inner.hits == []  # the inner service was never contacted, not even after the redirect
    assert "/to?url=" in web.hits[-1] or any(h.startswith("/to?url=") for h in web.hits)
    failures = "\n".join(report.photos_failed)
    assert len(report.photos_failed) == 3
    assert failures.count("ведёт на 127.0.0.1: адрес этого же компьютера — такие адреса не скачиваются") == 3
    assert SECRET.decode() not in failures and "image/png" not in failures and "200" not in failures
    assert not list((tmp_path / "store").rglob("*secret*"))


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "адрес этого же компьютера"),
        ("::1", "адрес этого же компьютера"),
        ("0.0.0.0", "адрес этого же компьютера"),  # noqa: S104 - an address refused, not bound
        ("10.1.2.3", "адрес частной сети"),
        ("192.168.0.10", "адрес частной сети"),
        ("172.16.5.4", "адрес частной сети"),
        ("fd00:ec2::254", "адрес частной сети"),  # the metadata service over IPv6
        ("169.254.169.254", "внутренний адрес (link-local, служба метаданных облака)"),
        ("fe80::1", "внутренний адрес (link-local, служба метаданных облака)"),
        ("::ffff:127.0.0.1", "адрес этого же компьютера"),  # loopback written as IPv6
        ("100.64.0.1", "не публичный адрес"),  # carrier-grade NAT
        ("224.0.0.1", "не публичный адрес"),
        ("93.184.215.14", None),
        ("2a00:1450:4001:82a::200e", None),
    ],
)
def test_which_addresses_are_public(address, why):
    assert why_not_public(ipaddress.ip_address(address)) == why


def test_a_name_resolving_to_one_public_and_one_inner_address_is_refused():
    # DNS answering a public address and an inner one (or rebinding between answers): every answer is checked,
    # and the connection goes to the checked one only.
    fetcher = PhotoFetcher(resolver=lambda host, port: ["93.184.215.14", "169.254.169.254"])
    with pytest.raises(PhotoDownloadError, match="169.254.169.254: внутренний адрес"):
        fetcher.fetch("https://photos.shop.example/a.jpg")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("file:///etc/passwd", "только по http:// или https://"),
        ("ftp://photos.example/a.png", "только по http:// или https://"),
        ("gopher://127.0.0.1:6379/_INFO", "только по http:// или https://"),
        ("http:///a.png", "нет сайта"),
        ("http://photos.example:99999/a.png", "записан неверно"),
    ],
)
def test_other_schemes_and_broken_addresses_are_refused(url, said):
    with pytest.raises(PhotoDownloadError, match=said):
        PhotoFetcher(resolver=lambda host, port: ["93.184.215.14"]).fetch(url)


def test_the_size_cap_holds_without_a_content_length(tmp_path):
    class Endless(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.end_headers()
            try:
                for _ in range(200):
                    self.wfile.write(b"\xff" * 65536)
            except OSError:
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((str(WEB), 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        fetcher = PhotoFetcher(trusted=frozenset({WEB}), max_bytes=1024 * 1024)
        with pytest.raises(PhotoDownloadError, match="больше 1 МБ"):
            fetcher.fetch(f"http://{WEB}:{server.server_address[1]}/big.jpg")
    finally:
        server.shutdown()
        server.server_close()
