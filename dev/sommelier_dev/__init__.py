"""Development tools that never ship in the Lambda layer: the `sommelier` command line, the evaluation, dev helpers."""
