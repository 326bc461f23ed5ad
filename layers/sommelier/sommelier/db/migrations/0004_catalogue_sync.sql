-- Real shop exports (issue 14): the shop's stable key, fields the catalogue does not model, availability,
-- full-length descriptions, and normalised columns written at import by sommelier.catalog.normalise
-- (a Python step after the migrations fills them for rows written before this file).

ALTER TABLE wines ADD COLUMN IF NOT EXISTS sku text;
ALTER TABLE wines ADD COLUMN IF NOT EXISTS extra jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE wines ADD COLUMN IF NOT EXISTS available boolean NOT NULL DEFAULT true;
ALTER TABLE wines ADD COLUMN IF NOT EXISTS image_url text;
-- ISO 3166-1 alpha-2 code of `country` (NULL when the language layer does not know the country).
ALTER TABLE wines ADD COLUMN IF NOT EXISTS country_code text;
-- grape_varieties holds names without shares; grape_shares the share of each (NULL when not given);
-- grape_keys the normalised canonical names the grape filter compares.
ALTER TABLE wines ADD COLUMN IF NOT EXISTS grape_shares numeric(5, 2)[] NOT NULL DEFAULT '{}';
ALTER TABLE wines ADD COLUMN IF NOT EXISTS grape_keys text[] NOT NULL DEFAULT '{}';
-- The food categories of the pairings («стейк из говядины» → говядина), compared with a request's categories.
ALTER TABLE wines ADD COLUMN IF NOT EXISTS food_categories text[] NOT NULL DEFAULT '{}';
-- The language layer's version these columns were computed with; another version is recomputed.
ALTER TABLE wines ADD COLUMN IF NOT EXISTS lexicon_version text;

ALTER TABLE wines DROP CONSTRAINT IF EXISTS ck_wines_description;
ALTER TABLE wines ADD CONSTRAINT ck_wines_description CHECK (char_length(description) BETWEEN 1 AND 20000);
ALTER TABLE wines DROP CONSTRAINT IF EXISTS ck_wines_tasting_notes;
ALTER TABLE wines ADD CONSTRAINT ck_wines_tasting_notes CHECK (char_length(tasting_notes) <= 5000);
ALTER TABLE wines DROP CONSTRAINT IF EXISTS ck_wines_sku;
ALTER TABLE wines ADD CONSTRAINT ck_wines_sku CHECK (sku IS NULL OR char_length(sku) BETWEEN 1 AND 100);
ALTER TABLE wines DROP CONSTRAINT IF EXISTS ck_wines_extra_object;
ALTER TABLE wines ADD CONSTRAINT ck_wines_extra_object CHECK (jsonb_typeof(extra) = 'object');

CREATE UNIQUE INDEX IF NOT EXISTS uq_wines_sku ON wines (sku) WHERE sku IS NOT NULL;
CREATE INDEX IF NOT EXISTS ix_wines_country_code ON wines (country_code) WHERE available;
CREATE INDEX IF NOT EXISTS ix_wines_grape_keys ON wines USING gin (grape_keys);
CREATE INDEX IF NOT EXISTS ix_wines_food_categories ON wines USING gin (food_categories);

-- Only available wines are ever recommended: the default order's index covers just them
-- (the queries say `w.available`, which the planner matches to this predicate).
DROP INDEX IF EXISTS ix_wines_typical_price_distance;
CREATE INDEX IF NOT EXISTS ix_wines_typical_price_distance ON wines ((abs(ln(price_rub) - ln(2000))), id) WHERE available;
