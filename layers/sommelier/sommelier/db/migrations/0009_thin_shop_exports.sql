-- Thin shop exports (issue 24): a 1C stock list has no producer, country, grapes or description, and a shop
-- may list one wine under two article codes (two volumes or vintages the name does not show).
-- `inferred`: the fields the import inferred from the wine's names with the language layer's knowledge
-- (the shop's own values are never in it), shown by `catalog export` and counted by `catalog stats`.

ALTER TABLE wines ADD COLUMN IF NOT EXISTS inferred text[] NOT NULL DEFAULT '{}';

ALTER TABLE wines DROP CONSTRAINT IF EXISTS ck_wines_producer;
ALTER TABLE wines ADD CONSTRAINT ck_wines_producer CHECK (char_length(producer) <= 200);
ALTER TABLE wines DROP CONSTRAINT IF EXISTS ck_wines_country;
ALTER TABLE wines ADD CONSTRAINT ck_wines_country CHECK (char_length(country) <= 100);
ALTER TABLE wines DROP CONSTRAINT IF EXISTS ck_wines_description;
ALTER TABLE wines ADD CONSTRAINT ck_wines_description CHECK (char_length(description) <= 20000);
ALTER TABLE wines DROP CONSTRAINT IF EXISTS ck_wines_grape_varieties;
ALTER TABLE wines ADD CONSTRAINT ck_wines_grape_varieties CHECK (cardinality(grape_varieties) <= 20);

-- Name, producer and vintage identify a wine only when the shop gives no sku; with skus, the sku does.
ALTER TABLE wines DROP CONSTRAINT IF EXISTS uq_wines_name_producer_vintage;
CREATE UNIQUE INDEX IF NOT EXISTS uq_wines_name_producer_vintage_without_sku
    ON wines (name, producer, vintage_year) NULLS NOT DISTINCT WHERE sku IS NULL;
