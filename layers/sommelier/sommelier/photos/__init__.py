"""Wine photos: the S3 bucket, or a local folder."""
