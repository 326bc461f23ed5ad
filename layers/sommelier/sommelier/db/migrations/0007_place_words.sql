-- The region filter matches whole words of a wine's region and appellation through PostgreSQL's `russian`
-- text search (tools/search.py PLACE_WORDS, docs/matching.md § 6), never substrings. This index holds
-- exactly that expression, so a region filter (one that matches nothing included) is an index probe
-- instead of reading every wine's region.
CREATE INDEX IF NOT EXISTS ix_wines_place_words ON wines USING gin (
    to_tsvector('russian'::regconfig, lower(translate(region || ' ' || coalesce(appellation, ''), 'Ёё-', 'Ее ')))
) WHERE available;
