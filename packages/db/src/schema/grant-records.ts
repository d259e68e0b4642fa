import { sql } from "drizzle-orm";
import { check, index, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { apiTokens } from "./api-tokens.ts";
import { northAuthSchema, oauthConsent, session } from "./authorization-server.ts";

/**
 * North's own records beside the authorization server's (decision 029): how each browser
 * session was authenticated, and what opened each grant. They live in `north_auth` with the
 * library's rows they describe and go with them (`ON DELETE CASCADE`); like the library's, they
 * are read and written by the app role before any tenant is known, so without row-level
 * security. Every limit on a grant is read from here, never from something the browser holds.
 */

/** The two ways a person proves who they are on North's sign-in page (SPEC §3a). */
export const SIGN_IN_METHODS = ["idp", "api_token"] as const;
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

const methodCheck = (column: unknown, token: unknown, scopes: unknown) =>
  sql`(${column} = 'idp' and ${token} is null and ${scopes} is null)
    or (${column} = 'api_token' and ${token} is not null and ${scopes} is not null)`;

/**
 * One row per authorization-server browser session North opened: the member, the method, and —
 * for a pasted API token — that token and its scopes, the most any grant opened in this session
 * may carry. No row, no consent: a session North did not record grants nothing.
 */
export const signInSessions = northAuthSchema.table(
  "sign_in_session",
  {
    sessionId: text("session_id")
      .primaryKey()
      .references(() => session.id, { onDelete: "cascade" }),
    organizationId: uuid("organization_id").notNull(),
    userId: uuid("user_id").notNull(),
    method: text("method", { enum: SIGN_IN_METHODS }).notNull(),
    apiTokenId: uuid("api_token_id").references(() => apiTokens.id, { onDelete: "cascade" }),
    scopeCap: text("scope_cap").array(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("sign_in_session_user").on(t.userId),
    check("sign_in_session_method", methodCheck(t.method, t.apiTokenId, t.scopeCap)),
  ],
);

/**
 * What opened a grant (the library's `oauth_consent` row), and when it ends: 30 days after the
 * consent whatever the refresh rotation, or earlier when the API token that opened it is revoked
 * or expires. A re-consent is a new grant (a new row, a new `id`), so an access token issued
 * under an earlier one (its `north_grant` claim) stays refused.
 */
export const oauthGrants = northAuthSchema.table(
  "oauth_grant",
  {
    /** The grant's generation: access tokens carry it (`north_grant`), and only it holds. */
    id: uuid("id").notNull().unique().defaultRandom(),
    consentId: text("consent_id")
      .primaryKey()
      .references(() => oauthConsent.id, { onDelete: "cascade" }),
    organizationId: uuid("organization_id").notNull(),
    userId: uuid("user_id").notNull(),
    clientId: text("client_id").notNull(),
    method: text("method", { enum: SIGN_IN_METHODS }).notNull(),
    apiTokenId: uuid("api_token_id").references(() => apiTokens.id, { onDelete: "cascade" }),
    scopeCap: text("scope_cap").array(),
    grantedAt: timestamp("granted_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    index("oauth_grant_user_client").on(t.userId, t.clientId),
    check("oauth_grant_method", methodCheck(t.method, t.apiTokenId, t.scopeCap)),
    check("oauth_grant_lifetime", sql`${t.expiresAt} > ${t.grantedAt}`),
  ],
);
