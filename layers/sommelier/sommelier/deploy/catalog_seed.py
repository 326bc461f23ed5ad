"""CloudFormation custom resource `CatalogueSeed` (template parameter CatalogueUrl): the shop's catalogue file,
imported on deploy while the stack's catalogue is still empty, so a first deploy has wines to show.

Create/Update: when the catalogue has no wines, the file at `Url` (JSON, CSV or a ZIP with photos) is
downloaded and imported exactly like a catalogue dropped under catalog/incoming/ (shop.catalog_drop:
the same rules, all or nothing, the report to the admin chat). A catalogue that already has wines is never
touched: later imports are the shop's (drops, `sommelier catalog import`). Delete does nothing: the wines
stay. It never fails the deploy: a refused file is reported to the admin chat and in the resource's
reason, and `sommelier deploy check` names an empty catalogue.
"""

from __future__ import annotations

import logging
import urllib.request
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from sommelier.deploy.custom_resource import SUCCESS, Budget, Outcome, one_line
from sommelier.embeddings.port import EmbeddingProvider
from sommelier.photos.store import PhotoStore
from sommelier.repositories.ports import CatalogRepository
from sommelier.shop.catalog_drop import MAX_DROP_BYTES, DropError, process_drop

logger = logging.getLogger(__name__)

PHYSICAL_ID = "sommelier-catalogue-seed"
DOWNLOAD_TIMEOUT_S = 60.0
CHUNK_BYTES = 1 << 16


def download(url: str, target: Path, timeout_s: float) -> None:
    """The file at `url` into `target`, refused beyond MAX_DROP_BYTES (checked while reading)."""
    if urlsplit(url).scheme not in ("https", "http"):
        raise DropError("CatalogueUrl должен быть адресом https://")
    request = urllib.request.Request(url, headers={"User-Agent": "sommelier-catalogue-seed"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=timeout_s) as response, target.open("wb") as out:  # nosec B310 - http(s) only, checked above
        size = 0
        while chunk := response.read(CHUNK_BYTES):
            size += len(chunk)
            if size > MAX_DROP_BYTES:
                raise DropError(f"файл больше {MAX_DROP_BYTES // (1024 * 1024)} МБ")
            out.write(chunk)


def not_seeded(event: dict[str, Any], exc: Exception) -> Outcome:
    """The function could not even start the import (a bad setting, an unreadable secret): the deploy goes on."""
    logger.error("catalogue seed not run: %s", one_line(exc))
    physical_id = event.get("PhysicalResourceId") or PHYSICAL_ID
    return Outcome(SUCCESS, f"Catalogue not imported: {one_line(exc)}", physical_id)


def seed(
    event: dict[str, Any],
    budget: Budget,
    *,
    catalog: CatalogRepository,
    embedder: Callable[[], EmbeddingProvider],
    photos: Callable[[], PhotoStore],
    notify: Callable[[str], object],
) -> Outcome:
    """The custom resource's work (for `custom_resource.respond`). Always SUCCESS: see the module's text."""
    physical_id = event.get("PhysicalResourceId") or PHYSICAL_ID
    if event.get("RequestType") == "Delete":
        return Outcome(SUCCESS, "Nothing to undo: the imported wines stay", physical_id)
    url = str((event.get("ResourceProperties") or {}).get("Url") or "").strip()
    if not url:
        return Outcome(SUCCESS, "No CatalogueUrl: nothing to import", PHYSICAL_ID)
    try:
        wines = catalog.stats().wines
        if wines:
            return Outcome(SUCCESS, f"The catalogue already has {wines} wines: {url} not imported", PHYSICAL_ID)
        key = PurePosixPath(urlsplit(url).path).name or "catalogue"
        result = process_drop(
            key,
            lambda path: download(url, path, budget.timeout(DOWNLOAD_TIMEOUT_S)),
            size=None,
            catalog=catalog,
            embedder=embedder(),
            photos=photos(),
        )
    except Exception as exc:  # the database or the embeddings unreachable: the deploy goes on, the check says so
        logger.error("catalogue seed failed: %s", one_line(exc))
        return Outcome(SUCCESS, f"Catalogue not imported: {one_line(exc)}", PHYSICAL_ID)
    notify(result.text)
    logger.info("catalogue seed %s: %s", url, "imported" if result.ok else "refused")
    headline = result.text.splitlines()[0] if result.text else ""
    return Outcome(SUCCESS, f"{'Imported' if result.ok else 'Refused'} {url}: {headline}", PHYSICAL_ID)
