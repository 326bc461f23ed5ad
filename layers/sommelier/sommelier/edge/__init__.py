"""The HTTP edge: the webhook app behind API Gateway (secret check, duplicate filter, enqueue)."""
