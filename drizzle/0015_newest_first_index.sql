DROP INDEX "memories_recent";--> statement-breakpoint
CREATE INDEX "memories_newest" ON "memories" USING btree ("organization_id","created_at" DESC NULLS FIRST);