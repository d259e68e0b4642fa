CREATE TABLE "admin_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"session_hash" text NOT NULL,
	"organization_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"token_id" uuid NOT NULL,
	"csrf_token" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"idle_timeout_s" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	CONSTRAINT "admin_sessions_session_hash_unique" UNIQUE("session_hash"),
	CONSTRAINT "admin_sessions_hash_shape" CHECK ("admin_sessions"."session_hash" ~ '^[0-9a-f]{64}$'),
	CONSTRAINT "admin_sessions_csrf_shape" CHECK ("admin_sessions"."csrf_token" ~ '^[A-Za-z0-9_-]{43}$'),
	CONSTRAINT "admin_sessions_idle_positive" CHECK ("admin_sessions"."idle_timeout_s" > 0),
	CONSTRAINT "admin_sessions_expiry_after_start" CHECK ("admin_sessions"."expires_at" > "admin_sessions"."created_at")
);
--> statement-breakpoint
ALTER TABLE "admin_sessions" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "admin_sessions" ADD CONSTRAINT "admin_sessions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "admin_sessions" ADD CONSTRAINT "admin_sessions_token_id_api_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."api_tokens"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "admin_sessions" ADD CONSTRAINT "admin_sessions_member_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."members"("organization_id","user_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "admin_sessions_member" ON "admin_sessions" USING btree ("organization_id","user_id");--> statement-breakpoint
CREATE POLICY "admin_sessions_own_select" ON "admin_sessions" AS PERMISSIVE FOR SELECT TO "app_role" USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and user_id = nullif(current_setting('north.user_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "admin_sessions_own_insert" ON "admin_sessions" AS PERMISSIVE FOR INSERT TO "app_role" WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and user_id = nullif(current_setting('north.user_id', true), '')::uuid);--> statement-breakpoint
CREATE POLICY "admin_sessions_own_update" ON "admin_sessions" AS PERMISSIVE FOR UPDATE TO "app_role" USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and user_id = nullif(current_setting('north.user_id', true), '')::uuid) WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and user_id = nullif(current_setting('north.user_id', true), '')::uuid);