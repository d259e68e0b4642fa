CREATE TABLE "audit_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organization_id" uuid NOT NULL,
	"actor_id" uuid,
	"token_id" uuid,
	"request_id" uuid,
	"tool" text NOT NULL,
	"outcome" text NOT NULL,
	"target_fingerprint" text,
	"target_length" integer,
	CONSTRAINT "audit_events_tool_shape" CHECK ("audit_events"."tool" ~ '^[a-z][a-z0-9_]{0,63}$'),
	CONSTRAINT "audit_events_outcome_valid" CHECK (outcome in ('created', 'updated', 'noop', 'conflict', 'rejected', 'rate_limited', 'read', 'error')),
	CONSTRAINT "audit_events_fingerprint_shape" CHECK ("audit_events"."target_fingerprint" is null or "audit_events"."target_fingerprint" ~ '^[0-9a-f]{64}$'),
	CONSTRAINT "audit_events_target_pair" CHECK (("audit_events"."target_fingerprint" is null) = ("audit_events"."target_length" is null) and ("audit_events"."target_length" is null or "audit_events"."target_length" >= 0))
);
--> statement-breakpoint
ALTER TABLE "audit_events" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "members" (
	"organization_id" uuid NOT NULL,
	"user_id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"role" text DEFAULT 'member' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "members_organization_id_user_id_pk" PRIMARY KEY("organization_id","user_id"),
	CONSTRAINT "members_user_id_unique" UNIQUE("user_id"),
	CONSTRAINT "members_role_valid" CHECK ("members"."role" in ('member', 'manager')),
	CONSTRAINT "members_email_length" CHECK (char_length("members"."email") between 3 and 320)
);
--> statement-breakpoint
ALTER TABLE "members" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "organizations_name_length" CHECK (char_length("organizations"."name") between 1 and 200)
);
--> statement-breakpoint
ALTER TABLE "organizations" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "working_profile_answers" (
	"organization_id" uuid NOT NULL,
	"owner_id" uuid NOT NULL,
	"question_id" text NOT NULL,
	"answer" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "working_profile_answers_organization_id_owner_id_question_id_pk" PRIMARY KEY("organization_id","owner_id","question_id"),
	CONSTRAINT "working_profile_answers_question_id_length" CHECK (char_length("working_profile_answers"."question_id") between 1 and 128),
	CONSTRAINT "working_profile_answers_answer_length" CHECK (char_length("working_profile_answers"."answer") between 1 and 10000),
	CONSTRAINT "working_profile_answers_version_positive" CHECK ("working_profile_answers"."version" >= 1)
);
--> statement-breakpoint
ALTER TABLE "working_profile_answers" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "members" ADD CONSTRAINT "members_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "working_profile_answers" ADD CONSTRAINT "working_profile_answers_owner_fk" FOREIGN KEY ("organization_id","owner_id") REFERENCES "public"."members"("organization_id","user_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_events_organization_time" ON "audit_events" USING btree ("organization_id","occurred_at");--> statement-breakpoint
CREATE UNIQUE INDEX "members_organization_email_unique" ON "members" USING btree ("organization_id",lower("email"));--> statement-breakpoint
CREATE POLICY "audit_events_tenant_insert" ON "audit_events" AS PERMISSIVE FOR INSERT TO "app_role" WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and actor_id is not distinct from nullif(current_setting('north.user_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "members_tenant_select" ON "members" AS PERMISSIVE FOR SELECT TO "app_role" USING ("members"."organization_id" = nullif(current_setting('north.organization_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "organizations_tenant_select" ON "organizations" AS PERMISSIVE FOR SELECT TO "app_role" USING ("organizations"."id" = nullif(current_setting('north.organization_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "working_profile_answers_owner_select" ON "working_profile_answers" AS PERMISSIVE FOR SELECT TO "app_role" USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and owner_id = nullif(current_setting('north.user_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "working_profile_answers_owner_insert" ON "working_profile_answers" AS PERMISSIVE FOR INSERT TO "app_role" WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and owner_id = nullif(current_setting('north.user_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "working_profile_answers_owner_update" ON "working_profile_answers" AS PERMISSIVE FOR UPDATE TO "app_role" USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and owner_id = nullif(current_setting('north.user_id', true), '')::uuid) WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and owner_id = nullif(current_setting('north.user_id', true), '')::uuid);