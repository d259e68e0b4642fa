DROP INDEX "memories_organization_search";--> statement-breakpoint
ALTER TABLE "memories" drop column "search";--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (public.north_tenant_lexemes(organization_id, public.north_unaccent_lexemes(to_tsvector(public.north_search_config(language), coalesce(body, ''))) || to_tsvector(public.north_search_config(language), public.north_unaccent(coalesce(body, ''))))) STORED;--> statement-breakpoint
CREATE INDEX "memories_tenant_search" ON "memories" USING gin ("search");