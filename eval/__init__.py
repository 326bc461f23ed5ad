"""The recommendation-quality evaluation's data: the golden set and the thresholds (see README.md).

The code lives in the `sommelier_dev.evaluation` package; run it with `sommelier eval`.
"""
