ALTER TABLE "memories" ADD COLUMN "language" text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "language" text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_language_valid" CHECK ("memories"."language" in ('en', 'fr'));--> statement-breakpoint
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_language_valid" CHECK ("organizations"."language" in ('en', 'fr'));