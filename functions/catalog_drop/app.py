"""Catalogue drop function: imports a JSON/CSV/ZIP uploaded under catalog/incoming/ in the photo bucket, and,
as the CatalogueSeed custom resource, the shop's file (CatalogueUrl) on deploy while the catalogue is empty.

Outside the VPC (it reaches the embeddings API and Telegram without a NAT); the rows reach the database
through the in-VPC tool function, as with `sommelier catalog import`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
from sommelier.deploy import is_custom_resource
from sommelier.embeddings import provider_from_settings
from sommelier.observability.shell import HandlerShell
from sommelier.photos.store import S3PhotoStore, photo_store_from_settings
from sommelier.repositories.adapters import repositories_from_settings
from sommelier.secrets import SettingsSource
from sommelier.settings import SettingError
from sommelier.shop.admin import notify_admin
from sommelier.shop.catalog_drop import dropped_objects, handle_drop_event, refuse_drop_event

if TYPE_CHECKING:
    from sommelier.deploy.custom_resource import Budget, Outcome


def dropped_keys(event: dict[str, Any]) -> str | None:
    """The correlation id: the uploaded object's key."""
    try:
        return ",".join(key for _, key, _ in dropped_objects(event)) or None
    except (KeyError, TypeError, AttributeError):
        return None


source = SettingsSource()
shell = HandlerShell("sommelier-catalog-drop", source.environment, correlation=dropped_keys)
logger = shell.logger


def seed_on_deploy(event: dict[str, Any], budget: Budget) -> Outcome:
    from sommelier.deploy.catalog_seed import not_seeded, seed

    try:
        settings, _ = source.current()
    except Exception as exc:  # a seed never fails the deploy; `sommelier deploy check` names an empty catalogue
        return not_seeded(event, exc)
    return seed(
        event,
        budget,
        catalog=repositories_from_settings(settings).catalog,
        embedder=lambda: provider_from_settings(settings),
        photos=lambda: photo_store_from_settings(settings),
        notify=lambda text: notify_admin(settings, text),
    )


@shell
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if is_custom_resource(event):  # CatalogueSeed, on deploys only: answers CloudFormation whatever happens
        from sommelier.deploy.catalog_seed import PHYSICAL_ID
        from sommelier.deploy.custom_resource import respond

        return {"status": respond(event, context, seed_on_deploy, physical_id=PHYSICAL_ID).status}
    s3 = boto3.client("s3")
    try:
        settings, _ = source.current()
    except SettingError as exc:  # the files stay in the bucket, each with a report naming the setting
        logger.error("no catalogue import: %s", exc)
        return {"files": [{"key": r.key, "imported": False} for r in refuse_drop_event(event, s3=s3, reason=exc)]}
    results = handle_drop_event(
        event,
        s3=s3,
        catalog=repositories_from_settings(settings).catalog,
        embedder=provider_from_settings(settings),
        photos_for=lambda bucket: S3PhotoStore(bucket, s3),
        notify=lambda text: notify_admin(settings, text),
        mode=settings.shop.catalog_drop_mode,
    )
    return {"files": [{"key": r.key, "imported": r.ok} for r in results]}
