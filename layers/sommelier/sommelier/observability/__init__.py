"""Logs, metrics and traces: the Lambda handler shell, secret redaction, EMF metrics, X-Ray subsegments."""
