-- The sound key (0010) forgives French silent t between n and a consonant: «Montrose» is «Монроз»,
-- «Montrachet» is «Монраше». The t goes from both spellings, so a name written with it in both alphabets
-- («Contrada», «Контрада») still meets itself. The spellings' folding of 0010 is kept under its own name,
-- and the stored sound of every wine is computed again (a generated column is computed only on write).
ALTER FUNCTION sommelier_sound(text) RENAME TO sommelier_spelling_sound;

CREATE FUNCTION sommelier_sound(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
SELECT regexp_replace(sommelier_spelling_sound(value), 'nt(?=[b-df-hj-np-tv-x])', 'n', 'g')
$$;

DROP INDEX IF EXISTS ix_wines_name_sound;
ALTER TABLE wines DROP COLUMN IF EXISTS name_sound;
ALTER TABLE wines ADD COLUMN name_sound tsvector GENERATED ALWAYS AS (
    sommelier_sound_words(name || ' ' || producer || ' ' || coalesce(appellation, '') || ' ' || region)
) STORED;
CREATE INDEX ix_wines_name_sound ON wines USING gin (name_sound) WHERE available;
