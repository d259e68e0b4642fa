import { createHmac, timingSafeEqual } from "node:crypto";
import {
  activeMemberForUser,
  authorizationServerTables as ast,
  type Database,
  organizationName,
  recordAudit,
  type SsoConnection,
  signInMember,
  ssoConnectionForDomain,
  ssoConnectionForOrganization,
  type TargetFingerprint,
  withOrganization,
  withTenant,
} from "@north/db";
import { eq } from "drizzle-orm";
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { principalForToken } from "../auth.ts";
import type { Logger } from "../logger.ts";
import { describeError } from "../logger.ts";
import { AS_BASE_PATH, type AuthorizationServer, OFFLINE_ACCESS } from "./authorization-server.ts";
import type { ScopeCap } from "./entitlement.ts";
import {
  type IdentityProviders,
  IdpLoginError,
  IdpUnreachableError,
  type PendingLogin,
} from "./identity-provider.ts";
import { consentPage, messagePage, redirectPage, SIGN_IN_STYLESHEET, signInPage } from "./pages.ts";
import type { SecretBox } from "./secret-box.ts";

export interface SignInDeps {
  db: Database;
  as: AuthorizationServer;
  cap: ScopeCap;
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

const EMAIL_DOMAIN = /^[^@\s]+@([a-z0-9.-]+\.[a-z]{2,})$/i;

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

  const continueOf = (form: Record<string, unknown>) =>
    typeof form.continue === "string" && form.continue.length <= 8192 ? form.continue : "";

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

  const signedIn = async (
    c: Context,
    member: { organizationId: string; userId: string },
    method: "idp" | "api_token",
    continueQuery: string,
    token?: { id: string | null; scopes: readonly string[] },
  ) => {
    await withTenant(deps.db, member, (tx) =>
      recordAudit(tx, {
        tool: "sign_in",
        outcome: "created",
        reason: method,
        tokenId: token?.id ?? null,
        requestId: c.get("requestId"),
      }),
    );
    const { sessionId, cookies } = await deps.as.openSession(member.userId);
    if (token) await deps.cap.set(c, sessionId, token.scopes);
    return resume(c, continueQuery, cookies);
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
    const domain = EMAIL_DOMAIN.exec(email)?.[1]?.toLowerCase();
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
    const match = await signInMember(deps.db, {
      organizationId: login.organizationId,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
    });
    if (!match.userId) {
      return refuse(
        c,
        login.organizationId,
        match.outcome,
        {
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
    return signedIn(c, member, "idp", login.continueQuery);
  });

  app.post("/token", async (c) => {
    const form = await c.req.parseBody();
    const continueQuery = continueOf(form);
    const token = typeof form.token === "string" ? form.token.trim() : "";
    const principal = token ? await principalForToken(deps.db, token) : null;
    if (!principal) {
      return c.html(
        signInPage({
          continueQuery,
          error: "That token is not valid (unknown, expired or revoked).",
        }),
        401,
      );
    }
    return signedIn(c, principal, "api_token", continueQuery, {
      id: principal.tokenId,
      scopes: principal.scopes,
    });
  });

  const csrfFor = (sessionId: string) =>
    createHmac("sha256", deps.secret).update(`consent:${sessionId}`).digest("base64url");

  /** The signed-in member and the client an authorization request names, or why not. */
  const consentContext = async (c: Context, continueQuery: string) => {
    const session = await deps.as.api.getSession({ headers: c.req.raw.headers });
    if (!session) return null;
    const member = await activeMemberForUser(deps.db, session.user.id);
    if (!member) return null;
    const query = new URLSearchParams(continueQuery);
    const clientId = query.get("client_id") ?? "";
    const [client] = await deps.db
      .select({ name: ast.oauthClient.name, uri: ast.oauthClient.uri })
      .from(ast.oauthClient)
      .where(eq(ast.oauthClient.clientId, clientId));
    if (!client) return null;
    const requested = (query.get("scope") ?? "").split(" ").filter(Boolean);
    const allowed = await deps.cap.allowed(c, session.session.id, member.role);
    return {
      sessionId: session.session.id,
      userId: session.user.id,
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
        clientName: context.client.name ?? context.clientId,
        clientUri: context.client.uri,
        organizationName: await organizationName(deps.db, {
          organizationId: context.member.organizationId,
          userId: context.userId,
        }),
        memberEmail: context.member.email,
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
    // Whatever the form posted, the grant is the request narrowed to the member's entitlement.
    const result = await deps.as.consent(c.req.raw.headers, {
      accept,
      ...(accept ? { scope: context.scopes.join(" ") } : {}),
      oauth_query: continueQuery,
    });
    await withTenant(deps.db, tenant, (tx) =>
      recordAudit(tx, {
        tool: "consent",
        outcome: accept ? "granted" : "denied",
        requestId: c.get("requestId"),
        target: deps.fingerprint(context.clientId),
      }),
    );
    const location = result.url;
    if (!location) throw new Error("the consent endpoint returned no redirect");
    return c.redirect(location, 303);
  });

  return app;
}
