-- Custom migration (drizzle-kit generate --custom): the functions that scope full-text search's
-- index entries to one organisation (decision 027). 0019 regenerates memories.search with them.
--
-- An organisation's tag: the last eight hex digits of its id (random in version 4 and version 7
-- UUIDs alike), and a colon. Two organisations that share a tag share index entries, never rows:
-- every search still reads only rows of its own organization_id.
CREATE OR REPLACE FUNCTION public.north_tenant_prefix(organization_id uuid) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN right($1::text, 8) || ':';
--> statement-breakpoint
-- The same lexemes, positions kept, each prefixed with the organisation's tag, so the GIN index
-- holds one entry per organisation and word: a word's posting list is that organisation's
-- matches, whatever other organisations or the organisation's own size.
CREATE OR REPLACE FUNCTION public.north_tenant_lexemes(organization_id uuid, tsvector) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  BEGIN ATOMIC
    SELECT coalesce(
      string_agg(
        '''' || public.north_tenant_prefix($1)
          || replace(replace(v.lexeme, '\', '\\'), '''', '''''') || ''''
          || coalesce(':' || array_to_string(v.positions, ','), ''),
        ' '),
      '')::tsvector
    FROM unnest($2) AS v;
  END;
--> statement-breakpoint
-- north_search_query (0010) with each lexeme prefixed: the query for the tagged search column.
-- (0010's body with `prefix ||`; the untagged form is dropped below.)
CREATE OR REPLACE FUNCTION public.north_search_query(language text, query text, match_all boolean, prefix text)
  RETURNS tsquery
  LANGUAGE sql STABLE PARALLEL SAFE
  BEGIN ATOMIC
    SELECT string_agg(w.alternatives, CASE WHEN match_all THEN ' & ' ELSE ' | ' END ORDER BY w.n)::tsquery
    FROM (
      SELECT p.n,
             '(' || string_agg(DISTINCT
               '''' || prefix || replace(replace(f.lexeme, '\', '\\'), '''', '''''') || '''', ' | ') || ')'
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
--> statement-breakpoint
-- The untagged form (0010) matches no tagged lexeme: nothing may call it any more.
DROP FUNCTION public.north_search_query(text, text, boolean);
