"""CloudFormation custom resources: the responder that always answers, and the deploy-time duties.

A function that is also a custom resource tells the two events apart here, without loading the responder:
its usual events (an S3 drop) never need it."""

from typing import Any


def is_custom_resource(event: Any) -> bool:
    """A CloudFormation custom-resource request (Create/Update/Delete, answered at ResponseURL)."""
    return isinstance(event, dict) and "RequestType" in event and "ResponseURL" in event
