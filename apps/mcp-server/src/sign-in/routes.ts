import {
  type Database,
  normalizeEmail,
  recordAudit,
  type SignInRecord,
  type SsoConnection,
  signInMember,
  ssoConnectionForDomain,
  ssoConnectionForOrganization,
  type TargetFingerprint,
  withOrganization,
  withTenant,
} from "@north/db";
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { principalForToken } from "../auth.ts";
import type { Logger } from "../logger.ts";
import { describeError } from "../logger.ts";
import { AS_BASE_PATH, type AuthorizationServer } from "./authorization-server.ts";
import type { BrowserSessions } from "./browser-session.ts";
import { buildConsentRoutes, continueOf } from "./consent.ts";
import { signInForms } from "./form-body.ts";
import {
  type IdentityProviders,
  IdpLoginError,
  IdpUnreachableError,
  type PendingLogin,
} from "./identity-provider.ts";
import { messagePage, redirectPage, SIGN_IN_STYLESHEET, signInPage } from "./pages.ts";
import type { SecretBox } from "./secret-box.ts";

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
interface LoginCookie extends PendingLogin {
  organizationId: string;
  /** `authorize`: resume an OAuth authorization; `console`: open an admin console session. */
  purpose: "authorize" | "console";
  continueQuery: string;
  expiresAt: number;
}
const LOGIN_COOKIE = "north_sign_in";
const LOGIN_TTL_S = 600;

export const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

// Of a normalised email, case-sensitive: a `u`+`i` flag or toLowerCase() would fold U+212A to "k".
const EMAIL_DOMAIN = /^[^@\s]+@([a-z0-9.-]+\.[a-z]{2,})$/;

/**
 * The pages of North's authorization server (SPEC §3a): sign-in (email → the organisation's IdP,
 * or an API token), the IdP callback, and consent. They end by handing the browser back to the
 * library's authorize endpoint, which re-checks the whole request itself: nothing a form posts
 * is trusted beyond who the person is and whether they agreed.
 */
export function buildSignInRoutes(deps: SignInDeps) {
  const app = new Hono<{ Variables: { requestId: string } }>();
  const redirectUri = `${deps.as.issuer}/sign-in/callback`;
  const secure = deps.as.issuer.startsWith("https://");

  app.use("*", async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  });
  app.use("*", signInForms);

  app.get("/style.css", (c) => {
    c.header("Content-Type", "text/css; charset=utf-8");
    return c.body(SIGN_IN_STYLESHEET);
  });

  /**
   * Back to the library's authorize endpoint with the original request, now signed in. Cookies
   * go through the context (a Response built by hand would have its Set-Cookie headers replaced
   * by the context's when Hono merges them).
   */
  const resume = (c: Context, continueQuery: string, cookies: string[] = []) => {
    const query = new URLSearchParams(continueQuery);
    for (const name of ["sig", "exp", "prompt"]) query.delete(name);
    for (const cookie of cookies) c.header("Set-Cookie", cookie, { append: true });
    return c.redirect(`${AS_BASE_PATH}/oauth2/authorize?${query}`, 303);
  };

  /** What the OIDC client needs of a connection: its secret decrypted, for this call only. */
  const idpSettings = async (connection: SsoConnection) => ({
    issuer: connection.issuer,
    clientId: connection.clientId,
    clientSecret: await deps.secrets.decrypt(connection.clientSecretEncrypted),
  });

  const refuse = async (
    c: Context,
    organizationId: string | null,
    reason: string,
    page: { title: string; message: string; hint?: string; status: 400 | 403 | 503 },
    target?: string,
  ) => {
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
  };

  /** Opens the browser session with North's record of how the person signed in, then resumes. */
  const signedIn = async (c: Context, record: SignInRecord, continueQuery: string) => {
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
  };

  app.get("/", (c) => {
    const query = new URL(c.req.url).search.slice(1);
    if (!query) {
      return c.html(
        messagePage(
          "Nothing to sign in to",
          "This page is reached from a Claude app that connects to North.",
          "Add North as a connector in claude.ai, Claude Desktop or Cowork, or run /mcp in Claude Code.",
        ),
        400,
      );
    }
    return c.html(signInPage({ continueQuery: query }));
  });

  app.post("/email", async (c) => {
    const form = await c.req.parseBody();
    const continueQuery = continueOf(form);
    const purpose = form.purpose === "console" && deps.openConsole ? "console" : "authorize";
    const email = typeof form.email === "string" ? form.email.trim() : "";
    const domain = EMAIL_DOMAIN.exec(normalizeEmail(email))?.[1];
    if (!domain) {
      return c.html(
        signInPage({ continueQuery, email, error: "Enter your work email address." }),
        400,
      );
    }
    const connection = await ssoConnectionForDomain(deps.db, domain);
    if (!connection) {
      return c.html(
        signInPage({
          continueQuery,
          email,
          error:
            "No organisation signs in with this email's domain. Check the address, or use an API token below.",
        }),
        400,
      );
    }
    try {
      const { url, pending } = await deps.idps.begin(
        await idpSettings(connection),
        redirectUri,
        email,
      );
      const cookie: LoginCookie = {
        ...pending,
        organizationId: connection.organizationId,
        purpose,
        continueQuery,
        expiresAt: Date.now() + LOGIN_TTL_S * 1000,
      };
      setCookie(c, LOGIN_COOKIE, await deps.secrets.encrypt(JSON.stringify(cookie)), {
        path: "/sign-in",
        httpOnly: true,
        secure,
        sameSite: "Lax",
        maxAge: LOGIN_TTL_S,
      });
      // A page that moves on by itself rather than a 303: the console's login form runs under
      // `form-action 'self'`, which browsers also apply to a form's redirects.
      return c.html(redirectPage(url.toString()));
    } catch (error) {
      if (!(error instanceof IdpUnreachableError)) throw error;
      return refuse(c, connection.organizationId, "idp_unreachable", {
        title: "Your firm's sign-in is unreachable",
        message: "North could not reach your organisation's identity provider.",
        hint: "Nothing was changed. Try again in a few minutes; if it persists, tell your IT team.",
        status: 503,
      });
    }
  });

  app.get("/callback", async (c) => {
    const raw = getCookie(c, LOGIN_COOKIE);
    deleteCookie(c, LOGIN_COOKIE, { path: "/sign-in", secure });
    let login: LoginCookie | null = null;
    try {
      login = raw ? (JSON.parse(await deps.secrets.decrypt(raw)) as LoginCookie) : null;
    } catch {
      login = null;
    }
    if (!login || login.expiresAt < Date.now()) {
      return c.html(
        messagePage(
          "Sign-in expired",
          "This sign-in took too long or was started in another browser.",
          "Start again from your Claude app.",
        ),
        400,
      );
    }
    const url = new URL(c.req.url);
    const idpError = url.searchParams.get("error");
    if (idpError) {
      return refuse(c, login.organizationId, "idp_denied", {
        title: "Sign-in cancelled",
        message: "Your firm's sign-in did not complete.",
        hint: "Start again from your Claude app.",
        status: 400,
      });
    }
    const connection = await ssoConnectionForOrganization(deps.db, login.organizationId);
    if (!connection) {
      return refuse(c, login.organizationId, "idp_removed", {
        title: "Sign-in unavailable",
        message: "Your organisation's sign-in is no longer configured.",
        status: 400,
      });
    }
    const callbackUrl = new URL(redirectUri);
    callbackUrl.search = url.search;
    let identity: Awaited<ReturnType<IdentityProviders["complete"]>>;
    try {
      identity = await deps.idps.complete(await idpSettings(connection), callbackUrl, login);
    } catch (error) {
      if (error instanceof IdpUnreachableError) {
        return refuse(c, login.organizationId, "idp_unreachable", {
          title: "Your firm's sign-in is unreachable",
          message:
            "North could not complete the sign-in with your organisation's identity provider.",
          hint: "Nothing was changed. Try again in a few minutes.",
          status: 503,
        });
      }
      if (error instanceof IdpLoginError) {
        return refuse(c, login.organizationId, "idp_invalid", {
          title: "Sign-in failed",
          message: "The answer from your firm's sign-in could not be verified.",
          hint: "Start again from your Claude app.",
          status: 400,
        });
      }
      throw error;
    }
    if (!identity.emailVerified || !identity.email) {
      return refuse(
        c,
        login.organizationId,
        "email_unverified",
        {
          title: "Email not verified",
          message:
            "Your firm's sign-in did not confirm your email address, so North cannot tell who you are.",
          hint: "Ask your IT team to verify the email on your account.",
          status: 403,
        },
        identity.email ?? identity.subject,
      );
    }
    const { email } = identity;
    const match = await withOrganization(deps.db, login.organizationId, (tx) =>
      signInMember(tx, { issuer: identity.issuer, subject: identity.subject, email }),
    );
    if (!match.userId) {
      return refuse(
        c,
        login.organizationId,
        match.outcome,
        match.outcome === "domain_not_allowed"
          ? {
              title: "Not a member",
              message: `${identity.email} is outside the email domains this North workspace signs in with.`,
              hint: "Sign in at your firm's identity provider with your work address.",
              status: 403,
            }
          : {
              title: "Not a member",
              message: `${identity.email} is not a member of this North workspace.`,
              hint: "North has no self-signup: ask your manager to add you (north member add).",
              status: 403,
            },
        identity.email,
      );
    }
    const member = { organizationId: login.organizationId, userId: match.userId };
    if (login.purpose === "console" && deps.openConsole) return deps.openConsole(c, member);
    return signedIn(c, { ...member, method: "idp" }, login.continueQuery);
  });

  app.post("/token", async (c) => {
    const form = await c.req.parseBody();
    const continueQuery = continueOf(form);
    const token = typeof form.token === "string" ? form.token.trim() : "";
    const principal = token ? await principalForToken(deps.db, token) : null;
    if (!principal?.tokenId) {
      return c.html(
        signInPage({
          continueQuery,
          error: "That token is not valid (unknown, expired or revoked).",
        }),
        401,
      );
    }
    // SPEC §3a: an organisation with an IdP signs its people in through it, never by token.
    if (await ssoConnectionForOrganization(deps.db, principal.organizationId)) {
      return refuse(c, principal.organizationId, "idp_required", {
        title: "Sign in with your firm's account",
        message: "Your organisation signs in through its identity provider, not with a token.",
        hint: "Go back and enter your work email instead.",
        status: 403,
      });
    }
    const { organizationId, userId, tokenId, scopes } = principal;
    const record = { organizationId, userId, method: "api_token" as const, apiTokenId: tokenId };
    return signedIn(c, { ...record, scopeCap: scopes }, continueQuery);
  });

  app.route("/", buildConsentRoutes(deps));

  return app;
}
