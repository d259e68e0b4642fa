CREATE TABLE "matter_screens" (
	"organization_id" uuid NOT NULL,
	"matter_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"reason" text NOT NULL,
	"screened_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "matter_screens_matter_id_user_id_pk" PRIMARY KEY("matter_id","user_id"),
	CONSTRAINT "matter_screens_reason_length" CHECK (char_length("matter_screens"."reason") between 1 and 500)
);
--> statement-breakpoint
ALTER TABLE "matter_screens" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "matter_team" (
	"organization_id" uuid NOT NULL,
	"matter_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"added_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "matter_team_matter_id_user_id_pk" PRIMARY KEY("matter_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "matter_team" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "matters" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"reference" text NOT NULL,
	"name" text NOT NULL,
	"client" text,
	"access" text DEFAULT 'open' NOT NULL,
	"hold_reason" text,
	"held_by" uuid,
	"held_since" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "matters_organization_id_unique" UNIQUE("organization_id","id"),
	CONSTRAINT "matters_reference_shape" CHECK ("matters"."reference" ~ '^[A-Za-z0-9._/-]{1,64}$'),
	CONSTRAINT "matters_name_length" CHECK (char_length("matters"."name") between 1 and 200),
	CONSTRAINT "matters_client_length" CHECK ("matters"."client" is null or char_length("matters"."client") between 1 and 200),
	CONSTRAINT "matters_access_valid" CHECK ("matters"."access" in ('open', 'restricted')),
	CONSTRAINT "matters_hold_triple" CHECK (("matters"."hold_reason" is null) = ("matters"."held_since" is null) and ("matters"."held_by" is null or "matters"."held_since" is not null)),
	CONSTRAINT "matters_hold_reason_length" CHECK ("matters"."hold_reason" is null or char_length("matters"."hold_reason") between 1 and 500)
);
--> statement-breakpoint
ALTER TABLE "matters" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "matter_id" uuid;--> statement-breakpoint
ALTER TABLE "matter_screens" ADD CONSTRAINT "matter_screens_matter_fk" FOREIGN KEY ("organization_id","matter_id") REFERENCES "public"."matters"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "matter_screens" ADD CONSTRAINT "matter_screens_member_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."members"("organization_id","user_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "matter_team" ADD CONSTRAINT "matter_team_matter_fk" FOREIGN KEY ("organization_id","matter_id") REFERENCES "public"."matters"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "matter_team" ADD CONSTRAINT "matter_team_member_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."members"("organization_id","user_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "matters" ADD CONSTRAINT "matters_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "matters_organization_reference_unique" ON "matters" USING btree ("organization_id",lower("reference"));--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_matter_fk" FOREIGN KEY ("organization_id","matter_id") REFERENCES "public"."matters"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memories_matter" ON "memories" USING btree ("organization_id","matter_id");--> statement-breakpoint
CREATE POLICY "matter_screens_tenant_select" ON "matter_screens" AS PERMISSIVE FOR SELECT TO "app_role" USING ("matter_screens"."organization_id" = nullif(current_setting('north.organization_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "matter_team_tenant_select" ON "matter_team" AS PERMISSIVE FOR SELECT TO "app_role" USING ("matter_team"."organization_id" = nullif(current_setting('north.organization_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "matters_tenant_select" ON "matters" AS PERMISSIVE FOR SELECT TO "app_role" USING ("matters"."organization_id" = nullif(current_setting('north.organization_id', true), '')::uuid);--> statement-breakpoint
ALTER POLICY "memories_tenant_select" ON "memories" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and (matter_id IS NULL OR matter_id = ANY ((SELECT public.north_visible_matters())::uuid[])));--> statement-breakpoint
ALTER POLICY "memories_tenant_insert" ON "memories" TO app_role WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and author_id = nullif(current_setting('north.user_id', true), '')::uuid and (matter_id IS NULL OR matter_id = ANY ((SELECT public.north_visible_matters())::uuid[])));--> statement-breakpoint
ALTER POLICY "memories_tenant_update" ON "memories" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and (matter_id IS NULL OR matter_id = ANY ((SELECT public.north_visible_matters())::uuid[]))) WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and (matter_id IS NULL OR matter_id = ANY ((SELECT public.north_visible_matters())::uuid[])) and (forgotten_at IS NULL OR NOT coalesce(matter_id = ANY ((SELECT public.north_held_matters())::uuid[]), false)));