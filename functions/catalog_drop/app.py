"""Catalogue drop function: imports a JSON/CSV/ZIP uploaded under catalog/incoming/ in the photo bucket.

Outside the VPC (it reaches the embeddings API and Telegram without a NAT); the rows reach the database
through the in-VPC tool function, as with `sommelier catalog import`."""

import boto3
from sommelier.embeddings import provider_from_settings
from sommelier.observability.shell import HandlerShell
from sommelier.secrets import load_secrets_into_environment
from sommelier.settings import load_settings
from sommelier.shop.admin import notify_admin
from sommelier.shop.catalog_drop import dropped_objects, handle_drop_event
from sommelier.storage.photos import S3PhotoStore
from sommelier.store.adapters import repositories_from_settings


def dropped_keys(event) -> str | None:
    """The correlation id: the uploaded object's key."""
    try:
        return ",".join(key for _, key, _ in dropped_objects(event)) or None
    except (KeyError, TypeError, AttributeError):
        return None


shell = HandlerShell("sommelier-catalog-drop", correlation=dropped_keys)
logger = shell.logger


@shell
def handler(event, context):
    load_secrets_into_environment()
    settings = load_settings()
    s3 = boto3.client("s3")
    results = handle_drop_event(
        event,
        s3=s3,
        catalog=repositories_from_settings(settings).catalog,
        embedder=provider_from_settings(settings),
        photos_for=lambda bucket: S3PhotoStore(bucket, s3),
        notify=notify_admin,
    )
    return {"files": [{"key": r.key, "imported": r.ok} for r in results]}
