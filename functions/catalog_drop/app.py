"""Catalogue drop function: imports a JSON/CSV/ZIP uploaded under catalog/incoming/ in the photo bucket.

Outside the VPC (it reaches the embeddings API and Telegram without a NAT); the rows reach the database
through the in-VPC tool function, as with `sommelier catalog import`."""

import logging

import boto3
from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging import utils as logging_utils
from sommelier.config import load_settings
from sommelier.embeddings import provider_from_settings
from sommelier.logging_redaction import install_redaction
from sommelier.secrets import load_secrets_into_environment
from sommelier.shop.admin import notify_admin
from sommelier.shop.catalog_drop import handle_drop_event
from sommelier.storage.photos import S3PhotoStore
from sommelier.tools.client import tools_from_settings

logger = Logger(service="sommelier-catalog-drop")
logging_utils.copy_config_to_registered_loggers(
    source_logger=logger,
    include={name for name in logging.root.manager.loggerDict if name.startswith("sommelier.")},
)
install_redaction(logger)


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    load_secrets_into_environment()
    settings = load_settings()
    s3 = boto3.client("s3")
    results = handle_drop_event(
        event,
        s3=s3,
        tools=tools_from_settings(settings),
        embedder=provider_from_settings(settings),
        photos_for=lambda bucket: S3PhotoStore(bucket, s3),
        notify=notify_admin,
    )
    return {"files": [{"key": r.key, "imported": r.ok} for r in results]}
