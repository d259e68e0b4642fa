import { ssoConnectionForOrganization } from "@north/db";
import { Hono } from "hono";
import { principalForToken } from "../../auth.ts";
import { continueOf } from "../form-body.ts";
import { signInPage } from "../pages.ts";
import { refuse, type SignInDeps, type SignInEnv, signedIn } from "./flow.ts";

/**
 * `POST /token`: signs in with a pasted API token, in a workspace without an IdP; the session
 * can grant no more than the token's own scopes.
 */
export function buildTokenRoutes(deps: SignInDeps) {
  const app = new Hono<SignInEnv>();

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
      return refuse(deps, c, principal.organizationId, "idp_required", {
        title: "Sign in with your firm's account",
        message: "Your organisation signs in through its identity provider, not with a token.",
        hint: "Go back and enter your work email instead.",
        status: 403,
      });
    }
    const { organizationId, userId, tokenId, scopes } = principal;
    const record = { organizationId, userId, method: "api_token" as const, apiTokenId: tokenId };
    return signedIn(deps, c, { ...record, scopeCap: scopes }, continueQuery);
  });

  return app;
}
