-- Decision 039: each lexeme of memories.search carries its scope's tag — its matter's, else its
-- organisation's — so the GIN index's entries and the planner's statistics are per scope. The
-- column is regenerated (a rewrite of memories, as 0019) and its index, dropped with it, rebuilt.
-- After migrating, `north provision` installs the candidate functions that ask for each scope's
-- tag; until then a recall naming a matter finds only firm-wide memories.
ALTER TABLE "memories" drop column "search";--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (public.north_tenant_lexemes(coalesce(matter_id, organization_id), public.north_unaccent_lexemes(to_tsvector(public.north_search_config(language), coalesce(body, ''))) || to_tsvector(public.north_search_config(language), public.north_unaccent(coalesce(body, ''))))) STORED;--> statement-breakpoint
CREATE INDEX "memories_tenant_search" ON "memories" USING gin ("search");
