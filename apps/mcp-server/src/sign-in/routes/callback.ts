import {
  type SignInOutcome,
  signInMember,
  ssoConnectionForOrganization,
  withOrganization,
} from "@north/db";
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie } from "hono/cookie";
import { IdpLoginError, IdpUnreachableError, type VerifiedIdentity } from "../identity-provider.ts";
import { messagePage } from "../pages.ts";
import {
  callbackUri,
  idpSettings,
  LOGIN_COOKIE,
  type LoginCookie,
  type RefusalPage,
  refuse,
  type SignInDeps,
  type SignInEnv,
  secureCookies,
  signedIn,
} from "./flow.ts";

/**
 * The login the email step left in its cookie, taken once (the cookie is cleared whatever it
 * holds): null when there is none, it does not decrypt, or it has expired.
 */
async function takeLogin(deps: SignInDeps, c: Context): Promise<LoginCookie | null> {
  const raw = getCookie(c, LOGIN_COOKIE);
  deleteCookie(c, LOGIN_COOKIE, { path: "/sign-in", secure: secureCookies(deps) });
  let login: LoginCookie | null = null;
  try {
    login = raw ? (JSON.parse(await deps.secrets.decrypt(raw)) as LoginCookie) : null;
  } catch {
    login = null;
  }
  return login && login.expiresAt >= Date.now() ? login : null;
}

/**
 * The identity the organisation's IdP vouches for, email verified, or the refusal page: the
 * IdP denied or is unreachable, its answer does not verify, the connection is gone, or the
 * email is not verified.
 */
async function verifiedIdentity(
  deps: SignInDeps,
  c: Context,
  login: LoginCookie,
): Promise<Response | (VerifiedIdentity & { email: string })> {
  const url = new URL(c.req.url);
  const idpError = url.searchParams.get("error");
  if (idpError) {
    return refuse(deps, c, login.organizationId, "idp_denied", {
      title: "Sign-in cancelled",
      message: "Your firm's sign-in did not complete.",
      hint: "Start again from your Claude app.",
      status: 400,
    });
  }
  const connection = await ssoConnectionForOrganization(deps.db, login.organizationId);
  if (!connection) {
    return refuse(deps, c, login.organizationId, "idp_removed", {
      title: "Sign-in unavailable",
      message: "Your organisation's sign-in is no longer configured.",
      status: 400,
    });
  }
  const callbackUrl = new URL(callbackUri(deps));
  callbackUrl.search = url.search;
  let identity: VerifiedIdentity;
  try {
    identity = await deps.idps.complete(await idpSettings(deps, connection), callbackUrl, login);
  } catch (error) {
    if (error instanceof IdpUnreachableError) {
      return refuse(deps, c, login.organizationId, "idp_unreachable", {
        title: "Your firm's sign-in is unreachable",
        message: "North could not complete the sign-in with your organisation's identity provider.",
        hint: "Nothing was changed. Try again in a few minutes.",
        status: 503,
      });
    }
    if (error instanceof IdpLoginError) {
      return refuse(deps, c, login.organizationId, "idp_invalid", {
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
      deps,
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
  return { ...identity, email: identity.email };
}

/** Why a verified identity is no member of the organisation, as its page says it. */
const notMemberPage = (outcome: SignInOutcome, email: string): RefusalPage =>
  outcome === "domain_not_allowed"
    ? {
        title: "Not a member",
        message: `${email} is outside the email domains this North workspace signs in with.`,
        hint: "Sign in at your firm's identity provider with your work address.",
        status: 403,
      }
    : {
        title: "Not a member",
        message: `${email} is not a member of this North workspace.`,
        hint: "North has no self-signup: ask your manager to add you (north member add).",
        status: 403,
      };

/**
 * `GET /callback`: the IdP's answer to the login the email step began. A verified identity
 * that is a member of the organisation signs in (or opens the console, for a console login);
 * anything else is a refusal page.
 */
export function buildCallbackRoutes(deps: SignInDeps) {
  const app = new Hono<SignInEnv>();

  app.get("/callback", async (c) => {
    const login = await takeLogin(deps, c);
    if (!login) {
      return c.html(
        messagePage(
          "Sign-in expired",
          "This sign-in took too long or was started in another browser.",
          "Start again from your Claude app.",
        ),
        400,
      );
    }
    const identity = await verifiedIdentity(deps, c, login);
    if (identity instanceof Response) return identity;
    const { email } = identity;
    const match = await withOrganization(deps.db, login.organizationId, (tx) =>
      signInMember(tx, { issuer: identity.issuer, subject: identity.subject, email }),
    );
    if (!match.userId) {
      return refuse(
        deps,
        c,
        login.organizationId,
        match.outcome,
        notMemberPage(match.outcome, email),
        email,
      );
    }
    const member = { organizationId: login.organizationId, userId: match.userId };
    if (login.purpose === "console" && deps.openConsole) return deps.openConsole(c, member);
    return signedIn(deps, c, { ...member, method: "idp" }, login.continueQuery);
  });

  return app;
}
