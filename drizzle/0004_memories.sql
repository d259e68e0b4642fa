CREATE TABLE "memories" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"subject_type" text,
	"subject_id" text,
	"subject_fingerprint" text,
	"body" text,
	"origin" text NOT NULL,
	"author_id" uuid NOT NULL,
	"run_id" text NOT NULL,
	"embedding" real[],
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, coalesce(body, ''))) STORED,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"forgotten_at" timestamp with time zone,
	"forgotten_by" uuid,
	"purged_at" timestamp with time zone,
	CONSTRAINT "memories_kind_valid" CHECK ("memories"."kind" in ('fact', 'observation')),
	CONSTRAINT "memories_origin_valid" CHECK ("memories"."origin" in ('stated', 'inferred')),
	CONSTRAINT "memories_body_length" CHECK ("memories"."body" is null or char_length("memories"."body") between 1 and 2000),
	CONSTRAINT "memories_subject_pair" CHECK (("memories"."subject_type" is null) = ("memories"."subject_fingerprint" is null) and ("memories"."subject_id" is null or "memories"."subject_type" is not null)),
	CONSTRAINT "memories_observation_subject" CHECK ("memories"."kind" = 'fact' or "memories"."subject_fingerprint" is not null),
	CONSTRAINT "memories_fingerprint_shape" CHECK ("memories"."subject_fingerprint" is null or "memories"."subject_fingerprint" ~ '^[0-9a-f]{64}$'),
	CONSTRAINT "memories_run_length" CHECK (char_length("memories"."run_id") between 1 and 200),
	CONSTRAINT "memories_erased_have_no_body" CHECK (("memories"."forgotten_at" is null and "memories"."purged_at" is null) or ("memories"."body" is null and "memories"."subject_id" is null and "memories"."embedding" is null))
);
--> statement-breakpoint
ALTER TABLE "memories" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_outcome_valid";--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "affected" integer;--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_author_fk" FOREIGN KEY ("organization_id","author_id") REFERENCES "public"."members"("organization_id","user_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memories_recent" ON "memories" USING btree ("organization_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "memories_subject" ON "memories" USING btree ("organization_id","subject_fingerprint");--> statement-breakpoint
CREATE INDEX "memories_expiry" ON "memories" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "memories_search" ON "memories" USING gin ("search");--> statement-breakpoint
ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_outcome_valid" CHECK (outcome in ('created', 'updated', 'noop', 'conflict', 'rejected', 'rate_limited', 'read', 'error', 'forgotten', 'purged'));--> statement-breakpoint
CREATE POLICY "memories_tenant_select" ON "memories" AS PERMISSIVE FOR SELECT TO "app_role" USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "memories_tenant_insert" ON "memories" AS PERMISSIVE FOR INSERT TO "app_role" WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and author_id = nullif(current_setting('north.user_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "memories_tenant_update" ON "memories" AS PERMISSIVE FOR UPDATE TO "app_role" USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid) WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid);