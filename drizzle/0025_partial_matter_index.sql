DROP INDEX "memories_matter";--> statement-breakpoint
CREATE INDEX "memories_matter" ON "memories" USING btree ("organization_id","matter_id") WHERE "memories"."matter_id" is not null;