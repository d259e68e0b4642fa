CREATE TABLE "north_auth"."oauth_grant" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"consent_id" text PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"client_id" text NOT NULL,
	"method" text NOT NULL,
	"api_token_id" uuid,
	"scope_cap" text[],
	"granted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "oauth_grant_id_unique" UNIQUE("id"),
	CONSTRAINT "oauth_grant_method" CHECK (("north_auth"."oauth_grant"."method" = 'idp' and "north_auth"."oauth_grant"."api_token_id" is null and "north_auth"."oauth_grant"."scope_cap" is null)
    or ("north_auth"."oauth_grant"."method" = 'api_token' and "north_auth"."oauth_grant"."api_token_id" is not null and "north_auth"."oauth_grant"."scope_cap" is not null)),
	CONSTRAINT "oauth_grant_lifetime" CHECK ("north_auth"."oauth_grant"."expires_at" > "north_auth"."oauth_grant"."granted_at")
);
--> statement-breakpoint
CREATE TABLE "north_auth"."sign_in_session" (
	"session_id" text PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"method" text NOT NULL,
	"api_token_id" uuid,
	"scope_cap" text[],
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sign_in_session_method" CHECK (("north_auth"."sign_in_session"."method" = 'idp' and "north_auth"."sign_in_session"."api_token_id" is null and "north_auth"."sign_in_session"."scope_cap" is null)
    or ("north_auth"."sign_in_session"."method" = 'api_token' and "north_auth"."sign_in_session"."api_token_id" is not null and "north_auth"."sign_in_session"."scope_cap" is not null))
);
--> statement-breakpoint
ALTER TABLE "north_auth"."oauth_grant" ADD CONSTRAINT "oauth_grant_consent_id_oauth_consent_id_fk" FOREIGN KEY ("consent_id") REFERENCES "north_auth"."oauth_consent"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "north_auth"."oauth_grant" ADD CONSTRAINT "oauth_grant_api_token_id_api_tokens_id_fk" FOREIGN KEY ("api_token_id") REFERENCES "public"."api_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "north_auth"."sign_in_session" ADD CONSTRAINT "sign_in_session_session_id_session_id_fk" FOREIGN KEY ("session_id") REFERENCES "north_auth"."session"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "north_auth"."sign_in_session" ADD CONSTRAINT "sign_in_session_api_token_id_api_tokens_id_fk" FOREIGN KEY ("api_token_id") REFERENCES "public"."api_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oauth_grant_user_client" ON "north_auth"."oauth_grant" USING btree ("user_id","client_id");--> statement-breakpoint
CREATE INDEX "sign_in_session_user" ON "north_auth"."sign_in_session" USING btree ("user_id");