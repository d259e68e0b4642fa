-- Custom migration (drizzle-kit generate --custom): two flaws of full-text search's functions
-- (0018) that an attack review of decision 039 found, both reachable from the tools.
--
-- A word too long once tagged: to_tsvector keeps a lexeme of up to 2,046 bytes, and the nine-byte
-- scope tag put before it could push it past what a tsvector or tsquery holds, so storing a
-- memory with such a word (680 CJK characters) and recalling it failed as an internal error.
-- Such a lexeme is left out, as PostgreSQL itself leaves out longer words; the rest is indexed.
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
    FROM unnest($2) AS v
    WHERE octet_length(public.north_tenant_prefix($1)) + octet_length(v.lexeme) <= 2046;
  END;
--> statement-breakpoint
-- A word repeated: every repetition was its own ANDed term, so a 1,000-character recall of one
-- word 500 times read the word's posting list once per term (seconds at a few hundred thousand
-- memories). Each word's alternatives now count once, in the order the word first came; and a
-- lexeme too long once tagged is left out as above.
CREATE OR REPLACE FUNCTION public.north_search_query(language text, query text, match_all boolean, prefix text)
  RETURNS tsquery
  LANGUAGE sql STABLE PARALLEL SAFE
  BEGIN ATOMIC
    SELECT string_agg(d.alternatives, CASE WHEN match_all THEN ' & ' ELSE ' | ' END ORDER BY d.n)::tsquery
    FROM (
      SELECT DISTINCT ON (w.alternatives) w.n, w.alternatives
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
          AND octet_length(prefix) + octet_length(f.lexeme) <= 2046
        GROUP BY p.n
      ) AS w
      ORDER BY w.alternatives, w.n
    ) AS d;
  END;
