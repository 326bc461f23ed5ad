-- search_wines without a price filter lists the wines nearest a typical shop price first
-- (sommelier.tools.search.TYPICAL_PRICE_ORDER). With this index PostgreSQL walks the wines in that
-- order and stops at the LIMIT-th match instead of filtering the whole table and sorting: at 10k
-- wines a food, grape or country filter goes from tens of milliseconds to about one (BENCHMARKS.md).
-- The expression must stay identical to the query's ORDER BY for the planner to use it.
CREATE INDEX IF NOT EXISTS ix_wines_typical_price_distance ON wines ((abs(ln(price_rub) - ln(2000))), id);
