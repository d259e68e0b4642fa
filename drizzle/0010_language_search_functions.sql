-- Custom migration (drizzle-kit generate --custom): what language-aware full text (0011,
-- decision 018) needs and drizzle-kit cannot express — the unaccent extension and four small
-- functions. They must exist before 0011 regenerates memories.search from them.
--
-- CREATE EXTENSION needs a superuser, or (unaccent is a trusted extension) a role with CREATE on
-- the database. A migrator without either fails here with nothing applied: an operator then runs
-- `CREATE EXTENSION unaccent SCHEMA public;` once as a superuser and migrates again.
CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public;
--> statement-breakpoint
-- unaccent() is STABLE (its dictionary could change); generated columns and indexes need
-- IMMUTABLE. The dictionary is named by schema, and the SQL-standard body resolves it once, here,
-- so no caller's search_path can change what it means.
CREATE OR REPLACE FUNCTION public.north_unaccent(text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN public.unaccent('public.unaccent'::regdictionary, $1);
--> statement-breakpoint
-- An organisation's language code ('en', 'fr') to the text search configuration that stems it.
CREATE OR REPLACE FUNCTION public.north_search_config(language text) RETURNS regconfig
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE language WHEN 'fr' THEN 'pg_catalog.french'::regconfig ELSE 'pg_catalog.english'::regconfig END;
--> statement-breakpoint
-- The same lexemes with accents folded, positions kept. Stemming first and folding after keeps
-- what the French stemmer reads from accents (résilié, résiliée and résiliation all stem to
-- résili), then makes the stem match a query typed without them.
CREATE OR REPLACE FUNCTION public.north_unaccent_lexemes(tsvector) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  BEGIN ATOMIC
    SELECT coalesce(
      string_agg(
        '''' || replace(replace(public.north_unaccent(v.lexeme), '\', '\\'), '''', '''''') || ''''
          || coalesce(':' || array_to_string(v.positions, ','), ''),
        ' '),
      '')::tsvector
    FROM unnest($1) AS v;
  END;
--> statement-breakpoint
-- A recall query as a tsquery for the organisation's language: each word of the query becomes
-- the alternatives its stem may take in memories.search (stemmed then folded, or folded then
-- stemmed), and the words are joined with AND (match_all) or OR. Words the stemmer drops (stop
-- words) and whole hyphenated words (their parts stay) are left out; NULL when no word is left.
CREATE OR REPLACE FUNCTION public.north_search_query(language text, query text, match_all boolean)
  RETURNS tsquery
  LANGUAGE sql STABLE PARALLEL SAFE
  BEGIN ATOMIC
    SELECT string_agg(w.alternatives, CASE WHEN match_all THEN ' & ' ELSE ' | ' END ORDER BY w.n)::tsquery
    FROM (
      SELECT p.n,
             '(' || string_agg(DISTINCT
               '''' || replace(replace(f.lexeme, '\', '\\'), '''', '''''') || '''', ' | ') || ')'
               AS alternatives
      FROM ts_parse('default', query) WITH ORDINALITY AS p(tokid, token, n)
      JOIN ts_token_type('default') AS t ON t.tokid = p.tokid
      CROSS JOIN LATERAL (
        SELECT to_tsvector(public.north_search_config(language), p.token) AS stems
      ) AS s
      CROSS JOIN LATERAL (
        SELECT public.north_unaccent(v.lexeme) FROM unnest(s.stems) AS v
        UNION
        SELECT v.lexeme
        FROM unnest(to_tsvector(public.north_search_config(language), public.north_unaccent(p.token))) AS v
      ) AS f(lexeme)
      WHERE t.alias NOT IN ('asciihword', 'hword', 'numhword') AND length(s.stems) > 0
      GROUP BY p.n
    ) AS w;
  END;
