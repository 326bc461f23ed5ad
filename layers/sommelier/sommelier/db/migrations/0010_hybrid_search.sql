-- Hybrid retrieval (toolfn/search.py, docs/matching.md): full-text search over a wine's words in the
-- `russian` and `simple` configurations, and a sound key that makes a Latin and a Cyrillic spelling of one
-- name alike («Château Latour» ↔ «Шато Латур», «Chianti» ↔ «Кьянти») and forgives typical misspellings
-- («небиоло», «санжовезе»). Two stored columns (`search_words`, `name_sound`, toolfn/search.py) serve the
-- queries; the importer names the columns it writes, so the database computes them on every insert and
-- update. The region filter matches a name's sound too («Кьянти Классико» is a Chianti, «Barolo» is «Бароло»).
-- Written by hand rather than with pg_trgm: the PostgreSQL the tests embed ships no contrib extensions.

-- A text array as one text (array_to_string is only STABLE in general; for text[] it cannot change).
CREATE OR REPLACE FUNCTION sommelier_joined(parts text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(array_to_string(parts, ' '), '') $$;

-- How a name sounds, in a small Latin alphabet: Cyrillic is transliterated, then the spellings French,
-- Italian, Spanish and German names share with their Russian renderings are folded together (eau/au → o,
-- ou → u, Italian cchi/chia → k, ch/sh/c before e,i/cia/z/ts → s, g before e,i/zh/dzh → j, c/q → k, y/j → i,
-- w → v, gn → n, oi → ua, silent h, ier → e), doubled letters written once. No letter z is left: it marks skeletons below.
CREATE OR REPLACE FUNCTION sommelier_sound(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
SELECT trim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    regexp_replace(regexp_replace(
    translate(
        replace(replace(replace(replace(replace(replace(replace(replace(
            -- a French word's silent ending, before Cyrillic comes in (Merlot → мерло, Blanc → блан, Лафит stays)
            regexp_replace(translate(lower(value),
                'àáâãäåāèéêëēìíîïòóôõöøùúûüýÿçñšžё',
                'aaaaaaaeeeeeiiiiooooooouuuuyycnsze'), '([aeiou])[tsdx]\M|(n)c\M', '\1\2', 'g'),
            'щ', 'sh'), 'ш', 'sh'), 'ч', 'ch'), 'ж', 'zh'), 'ц', 'ts'), 'х', 'h'), 'ю', 'u'), 'я', 'ia'),
        'абвгдезийклмнопрстуфыэьъ', 'abvgdeziiklmnoprstufie'),
    '[^a-z0-9 ]+', ' ', 'g'),
    '([tgrk])h', '\1', 'g'),
    '(eau|au)', 'o', 'g'),
    'ou', 'u', 'g'),
    'oi', 'ua', 'g'),
    '(ier\M|a[iy]\M)', 'e', 'g'),
    '(cch|ch(?=i[aeou]))', 'k', 'g'),
    '(dzh|dj|zh|g(?=[eiy]))', 'j', 'g'),
    '(tsch|tsh|sch|ch|sh|ts|tz|z|ci(?=[aou])|c(?=[eiy]))', 's', 'g'),
    '(ck|kh|c|q|x)', 'k', 'g'),
    'gn', 'n', 'g'),
    'ph', 'f', 'g'),
    '[yj]', 'i', 'g'),
    'w', 'v', 'g'),
    '([a-z])\1+', '\1', 'g'))
$$;

-- Each sounded word's consonant skeleton (the vowels after its first letter dropped), marked with a z:
-- «совиньен» and «Sauvignon» differ by a vowel, their skeletons do not.
CREATE OR REPLACE FUNCTION sommelier_skeleton(sound text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
SELECT regexp_replace(regexp_replace(sound, '([a-z0-9])[aeiou]+', '\1', 'g'), '(\S+)', 'z\1', 'g')
$$;

-- The words of a name as the name search compares them: each sounded word and its skeleton.
CREATE OR REPLACE FUNCTION sommelier_sound_words(value text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
SELECT to_tsvector('simple'::regconfig, s || ' ' || sommelier_skeleton(s)) FROM sommelier_sound(value) AS s
$$;

-- A customer's name as a query of sounded words: every word of three letters or more, each as a prefix
-- without its last vowel (so «Латура» finds «Латур»), by its sound or, when it has three consonants, by its
-- skeleton. A name of four words or more may miss one («Шабли Премье Крю Вайон» for «…Vaillons»).
CREATE OR REPLACE FUNCTION sommelier_sound_query(value text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
SELECT (CASE WHEN cardinality(terms) < 4 THEN coalesce(array_to_string(terms, ' & '), '')
    ELSE (SELECT string_agg('(' || array_to_string(terms[:i - 1] || terms[i + 1:], ' & ') || ')', ' | ')
          FROM generate_subscripts(terms, 1) AS i)
    END)::tsquery
FROM (
    SELECT array_agg(CASE WHEN length(sommelier_skeleton(sound)) >= 4
        THEN '(' || quote_literal(regexp_replace(sound, '(...)[aeiou]$', '\1')) || ':* | '
            || quote_literal(sommelier_skeleton(sound)) || ':*)'
        ELSE quote_literal(regexp_replace(sound, '(...)[aeiou]$', '\1')) || ':*' END ORDER BY sound) AS terms
    FROM (
        SELECT DISTINCT sommelier_sound(lexeme) AS sound
        FROM unnest(to_tsvector('simple'::regconfig, value)) AS lexemes
    ) AS sounded
    WHERE length(sound) >= 3 AND sound !~ ' '
) AS query_terms
$$;

-- The words a customer names a wine by, weighted: name and producer (A, in both configurations), place
-- and grapes (B). A description's words are the vector's to weigh (and 0001's ix_wines_fulltext indexes
-- them): here they would make every wine match «вино». Stored: ranking reads it for every wine matched.
ALTER TABLE wines ADD COLUMN IF NOT EXISTS search_words tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple'::regconfig, name || ' ' || producer), 'A')
    || setweight(to_tsvector('russian'::regconfig, name || ' ' || producer), 'A')
    || setweight(to_tsvector('russian'::regconfig,
        coalesce(appellation, '') || ' ' || region || ' ' || sommelier_joined(grape_varieties)), 'B')
) STORED;
CREATE INDEX IF NOT EXISTS ix_wines_search_words ON wines USING gin (search_words) WHERE available;

-- The sound of a wine's name, producer and place. Stored for the same reason (sommelier_sound is fifteen
-- regular expressions: 60 µs a row, 180 ms for the 3 000 wines a common name matches at 100k).
ALTER TABLE wines ADD COLUMN IF NOT EXISTS name_sound tsvector GENERATED ALWAYS AS (
    sommelier_sound_words(name || ' ' || producer || ' ' || coalesce(appellation, '') || ' ' || region)
) STORED;
CREATE INDEX IF NOT EXISTS ix_wines_name_sound ON wines USING gin (name_sound) WHERE available;
