import {
  type Database,
  recordAudit,
  type SignInRecord,
  type SsoConnection,
  type TargetFingerprint,
  withOrganization,
  withTenant,
} from "@north/db";
import type { Context } from "hono";
import type { Logger } from "../../logger.ts";
import { describeError } from "../../logger.ts";
import { AS_BASE_PATH, type AuthorizationServer } from "../authorization-server.ts";
import type { BrowserSessions } from "../browser-session.ts";
import type { IdentityProviders, PendingLogin } from "../identity-provider.ts";
import { messagePage } from "../pages.ts";
import type { SecretBox } from "../secret-box.ts";

/** The sign-in apps' context: the request id the top-level app sets. */
export type SignInEnv = { Variables: { requestId: string } };

export interface SignInDeps {
  db: Database;
  as: AuthorizationServer;
  sessions: BrowserSessions;
  idps: IdentityProviders;
  secrets: SecretBox;
  /** NORTH_SECRET_KEY: keys the consent form's CSRF token. */
  secret: string;
  fingerprint: (value: string) => TargetFingerprint;
  logger: Logger;
  /**
   * Ends a console sign-in (the login form at /admin/login posts here with `purpose=console`):
   * opens the console's own session for the member, or refuses a non-manager. Supplied by the
   * composition root, which knows the console.
   */
  openConsole?: (
    c: Context,
    member: { organizationId: string; userId: string },
  ) => Promise<Response>;
}

/** The login's state between the redirect to the IdP and its callback: an encrypted cookie. */
export interface LoginCookie extends PendingLogin {
  organizationId: string;
  /** `authorize`: resume an OAuth authorization; `console`: open an admin console session. */
  purpose: "authorize" | "console";
  continueQuery: string;
  expiresAt: number;
}
export const LOGIN_COOKIE = "north_sign_in";
export const LOGIN_TTL_S = 600;

/** Where the IdP sends the browser back: the callback sub-app's path. */
export const callbackUri = (deps: SignInDeps) => `${deps.as.issuer}/sign-in/callback`;

/** Whether the login cookie may only travel over https (an https issuer). */
export const secureCookies = (deps: SignInDeps) => deps.as.issuer.startsWith("https://");

/** What the OIDC client needs of a connection: its secret decrypted, for this call only. */
export const idpSettings = async (deps: SignInDeps, connection: SsoConnection) => ({
  issuer: connection.issuer,
  clientId: connection.clientId,
  clientSecret: await deps.secrets.decrypt(connection.clientSecretEncrypted),
});

/** A refusal page, and what it says about the person, as the sign-in steps show it. */
export interface RefusalPage {
  title: string;
  message: string;
  hint?: string;
  status: 400 | 403 | 503;
}

/**
 * Refuses a sign-in with a page: audited `refused` in the organisation it concerns (when known;
 * the target fingerprinted), and logged with the reason only.
 */
export async function refuse(
  deps: SignInDeps,
  c: Context,
  organizationId: string | null,
  reason: string,
  page: RefusalPage,
  target?: string,
) {
  if (organizationId) {
    await withOrganization(deps.db, organizationId, (tx) =>
      recordAudit(tx, {
        tool: "sign_in",
        outcome: "refused",
        reason,
        requestId: c.get("requestId"),
        target: target ? deps.fingerprint(target.toLowerCase()) : undefined,
      }),
    ).catch((error) => deps.logger.error(describeError(error), "audit of a refusal failed"));
  }
  deps.logger.info({ requestId: c.get("requestId"), reason }, "sign-in refused");
  return c.html(messagePage(page.title, page.message, page.hint), page.status);
}

/**
 * Back to the library's authorize endpoint with the original request, now signed in. Cookies
 * go through the context (a Response built by hand would have its Set-Cookie headers replaced
 * by the context's when Hono merges them).
 */
function resume(c: Context, continueQuery: string, cookies: string[] = []) {
  const query = new URLSearchParams(continueQuery);
  for (const name of ["sig", "exp", "prompt"]) query.delete(name);
  for (const cookie of cookies) c.header("Set-Cookie", cookie, { append: true });
  return c.redirect(`${AS_BASE_PATH}/oauth2/authorize?${query}`, 303);
}

/** Opens the browser session with North's record of how the person signed in, then resumes. */
export async function signedIn(
  deps: SignInDeps,
  c: Context,
  record: SignInRecord,
  continueQuery: string,
) {
  await withTenant(deps.db, record, (tx) =>
    recordAudit(tx, {
      tool: "sign_in",
      outcome: "created",
      reason: record.method,
      tokenId: record.method === "api_token" ? record.apiTokenId : null,
      requestId: c.get("requestId"),
    }),
  );
  return resume(c, continueQuery, await deps.sessions.open(record));
}
