import { normalizeEmail, ssoConnectionForDomain } from "@north/db";
import { Hono } from "hono";
import { setCookie } from "hono/cookie";
import { continueOf } from "../form-body.ts";
import { IdpUnreachableError } from "../identity-provider.ts";
import { redirectPage, signInPage } from "../pages.ts";
import {
  callbackUri,
  idpSettings,
  LOGIN_COOKIE,
  LOGIN_TTL_S,
  type LoginCookie,
  refuse,
  type SignInDeps,
  type SignInEnv,
  secureCookies,
} from "./flow.ts";

// Of a normalised email, case-sensitive: a `u`+`i` flag or toLowerCase() would fold U+212A to "k".
const EMAIL_DOMAIN = /^[^@\s]+@([a-z0-9.-]+\.[a-z]{2,})$/;

/**
 * `POST /email`: the organisation whose IdP signs in this email's domain, and the way there —
 * the login's state in an encrypted cookie for the callback, and a page that moves on to the IdP.
 */
export function buildEmailRoutes(deps: SignInDeps) {
  const app = new Hono<SignInEnv>();

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
        await idpSettings(deps, connection),
        callbackUri(deps),
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
        secure: secureCookies(deps),
        sameSite: "Lax",
        maxAge: LOGIN_TTL_S,
      });
      // A page that moves on by itself rather than a 303: the console's login form runs under
      // `form-action 'self'`, which browsers also apply to a form's redirects.
      return c.html(redirectPage(url.toString()));
    } catch (error) {
      if (!(error instanceof IdpUnreachableError)) throw error;
      return refuse(deps, c, connection.organizationId, "idp_unreachable", {
        title: "Your firm's sign-in is unreachable",
        message: "North could not reach your organisation's identity provider.",
        hint: "Nothing was changed. Try again in a few minutes; if it persists, tell your IT team.",
        status: 503,
      });
    }
  });

  return app;
}
