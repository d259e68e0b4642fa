DROP INDEX "memories_search_stemmed";--> statement-breakpoint
CREATE INDEX "memories_organization_search" ON "memories" USING gin ("organization_id","search");