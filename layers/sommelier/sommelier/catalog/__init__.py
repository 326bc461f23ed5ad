"""The catalogue: the importer of a shop's files."""
