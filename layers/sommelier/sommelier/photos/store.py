"""The photo store port: S3 in AWS (and moto locally), or a folder under .sommelier/ offline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sommelier.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

PRESIGNED_URL_SECONDS = 3600


class PhotoStore(Protocol):
    def put(self, key: str, data: bytes, content_type: str = "image/png") -> None: ...
    def get(self, key: str) -> bytes | None: ...
    def presigned_url(self, key: str) -> str | None: ...
    def describe(self, key: str) -> str: ...


class S3PhotoStore:
    def __init__(self, bucket: str, client: S3Client | None = None):
        import boto3  # AWS_ENDPOINT_URL (moto server locally) is honoured by boto3 itself

        self.bucket = bucket
        self._client = client or boto3.client("s3")

    def put(self, key: str, data: bytes, content_type: str = "image/png") -> None:
        self._client.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType=content_type)

    def get(self, key: str) -> bytes | None:
        try:
            return self._client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except self._client.exceptions.NoSuchKey:
            return None

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._client.head_object(Bucket=self.bucket, Key=key)
            return True
        except ClientError:
            return False

    def presigned_url(self, key: str) -> str | None:
        if not self.exists(key):
            return None
        return self._client.generate_presigned_url(
            "get_object", Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=PRESIGNED_URL_SECONDS
        )

    def describe(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"


class LocalPhotoStore:
    """A folder standing in for the bucket. It has no URLs Telegram could fetch, so senders upload bytes."""

    def __init__(self, root: Path):
        self.root = root

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if self.root.resolve() not in path.parents:
            raise ValueError(f"photo key escapes the store: {key!r}")
        return path

    def put(self, key: str, data: bytes, content_type: str = "image/png") -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        return path.read_bytes() if path.is_file() else None

    def presigned_url(self, key: str) -> str | None:
        return None

    def describe(self, key: str) -> str:
        return str(self._path(key))


def photo_store_from_settings(settings: Settings) -> PhotoStore:
    if settings.aws.images_bucket:
        return S3PhotoStore(settings.aws.images_bucket)
    return LocalPhotoStore(settings.state_dir / "photos")
