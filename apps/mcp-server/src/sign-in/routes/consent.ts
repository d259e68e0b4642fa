import { createHmac, timingSafeEqual } from "node:crypto";
import {
  authorizationServerTables as ast,
  type Database,
  memberEmail,
  organizationName,
  recordAudit,
  replaceGrant,
  type TargetFingerprint,
  withTenant,
} from "@north/db";
import { eq } from "drizzle-orm";
import { type Context, Hono } from "hono";
import {
  type AuthorizationServer,
  GRANT_LIFETIME_S,
  OFFLINE_ACCESS,
} from "../authorization-server.ts";
import type { BrowserSessions } from "../browser-session.ts";
import { describeConsentClient } from "../consent-client.ts";
import { continueOf } from "../form-body.ts";
import { consentPage, messagePage } from "../pages.ts";
import { isClientId } from "../protocol.ts";
import type { SignInEnv } from "./flow.ts";

export interface ConsentDeps {
  db: Database;
  as: AuthorizationServer;
  sessions: BrowserSessions;
  /** NORTH_SECRET_KEY: keys the consent form's CSRF token. */
  secret: string;
  fingerprint: (value: string) => TargetFingerprint;
}

/**
 * The consent page and its decision (SPEC §3a): the person North recorded as signed in allows
 * or denies the pending authorization; each allowed consent opens a new grant with North's
 * record of what opened it (decision 029). Mounted under /sign-in.
 */
export function buildConsentRoutes(deps: ConsentDeps) {
  const app = new Hono<SignInEnv>();

  const csrfFor = (sessionId: string) =>
    createHmac("sha256", deps.secret).update(`consent:${sessionId}`).digest("base64url");

  /**
   * The signed-in member (as North recorded the sign-in: no record, no consent) and the client
   * an authorization request names, or null.
   */
  const consentContext = async (c: Context, continueQuery: string) => {
    const signedIn = await deps.sessions.current(c.req.raw.headers);
    if (!signedIn) return null;
    const { member, sessionId, userId, record } = signedIn;
    const query = new URLSearchParams(continueQuery);
    const clientId = query.get("client_id");
    if (!isClientId(clientId)) return null;
    const [client] = await deps.db
      .select({ name: ast.oauthClient.name, uri: ast.oauthClient.uri })
      .from(ast.oauthClient)
      .where(eq(ast.oauthClient.clientId, clientId));
    if (!client) return null;
    const requested = (query.get("scope") ?? "").split(" ").filter(Boolean);
    const allowed = signedIn.grantable;
    return {
      sessionId,
      userId,
      record,
      member,
      clientId,
      client,
      scopes: requested.filter((s) => allowed.includes(s)),
      withheld: requested.filter((s) => !allowed.includes(s)),
    };
  };

  const consentExpired = (c: Context) =>
    c.html(
      messagePage(
        "Sign-in expired",
        "This consent page is no longer valid.",
        "Start again from your Claude app.",
      ),
      400,
    );

  app.get("/consent", async (c) => {
    const continueQuery = new URL(c.req.url).search.slice(1);
    const context = await consentContext(c, continueQuery);
    if (!context) return consentExpired(c);
    return c.html(
      consentPage({
        client: await describeConsentClient(deps.db, context.clientId, continueQuery),
        organizationName: await organizationName(deps.db, {
          organizationId: context.member.organizationId,
          userId: context.userId,
        }),
        memberEmail: await memberEmail(deps.db, {
          organizationId: context.member.organizationId,
          userId: context.userId,
        }),
        scopes: context.scopes,
        withheld: context.withheld,
        continueQuery,
        csrf: csrfFor(context.sessionId),
      }),
    );
  });

  app.post("/consent", async (c) => {
    const form = await c.req.parseBody();
    const continueQuery = continueOf(form);
    const context = await consentContext(c, continueQuery);
    if (!context) return consentExpired(c);
    const posted = typeof form.csrf === "string" ? Buffer.from(form.csrf) : Buffer.alloc(0);
    const expected = Buffer.from(csrfFor(context.sessionId));
    if (posted.length !== expected.length || !timingSafeEqual(posted, expected)) {
      return consentExpired(c);
    }
    const grantable = context.scopes.some((s) => s !== OFFLINE_ACCESS);
    const accept = form.decision === "allow" && grantable;
    const tenant = { organizationId: context.member.organizationId, userId: context.userId };
    // Whatever the form posted, the grant is the request narrowed to what this sign-in may grant.
    // The library checks its signed query first: a tampered or stale one changes nothing.
    const result = await deps.as
      .consent(c.req.raw.headers, {
        accept,
        ...(accept ? { scope: context.scopes.join(" ") } : {}),
        oauth_query: continueQuery,
      })
      .catch(() => null);
    if (!result?.url) return consentExpired(c);
    // Each allowed consent opens a new grant (decision 029): an earlier one for this client ends,
    // and its access tokens, which name it, stay refused.
    if (accept) {
      const opened = await replaceGrant(deps.db, {
        clientId: context.clientId,
        record: context.record,
        lifetimeS: GRANT_LIFETIME_S,
      });
      if (!opened) throw new Error("the consent endpoint recorded no consent");
    }
    await withTenant(deps.db, tenant, (tx) =>
      recordAudit(tx, {
        tool: "consent",
        outcome: accept ? "granted" : "denied",
        requestId: c.get("requestId"),
        target: deps.fingerprint(context.clientId),
      }),
    );
    return c.redirect(result.url, 303);
  });

  return app;
}
