import { Hono } from "hono";
import { signInForms } from "./form-body.ts";
import { buildCallbackRoutes } from "./routes/callback.ts";
import { buildConsentRoutes } from "./routes/consent.ts";
import { buildEmailRoutes } from "./routes/email.ts";
import type { SignInDeps, SignInEnv } from "./routes/flow.ts";
import { buildPageRoutes } from "./routes/page.ts";
import { buildSignOutRoutes } from "./routes/sign-out.ts";
import { buildTokenRoutes } from "./routes/token.ts";
import { SECURITY_HEADERS } from "./security-headers.ts";

export type { SignInDeps } from "./routes/flow.ts";

/**
 * The pages of North's authorization server (SPEC §3a), one sub-app per step: the sign-in page
 * (email → the organisation's IdP, or an API token), the IdP callback, consent and sign-out.
 * They end by handing the browser back to the library's authorize endpoint, which re-checks the
 * whole request itself: nothing a form posts is trusted beyond who the person is and whether
 * they agreed. Every page gets the security headers, and every POST body is read once by
 * `signInForms`, before any step's handler runs.
 */
export function buildSignInRoutes(deps: SignInDeps) {
  const app = new Hono<SignInEnv>();

  app.use("*", async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  });
  app.use("*", signInForms);

  app.route("/", buildPageRoutes());
  app.route("/", buildEmailRoutes(deps));
  app.route("/", buildCallbackRoutes(deps));
  app.route("/", buildTokenRoutes(deps));
  app.route("/", buildConsentRoutes(deps));
  app.route("/", buildSignOutRoutes(deps));

  return app;
}
