"""Developer tools for local runs without Docker or AWS: the template reader behind
`sommelier invoke` and `sommelier serve`, and the local HTTP API. Not used in Lambda."""
