// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * Issue 21, the independent attacker's findings 7, 9, 10 and 11 against the finished sign-in:
 * an IdP identity outside the organisation's domains, consent-name look-alikes, a malformed
 * form body, and a replayed authorization code.
 */
import type { Entry } from "../../support/catalogue.ts";

export const SUITE = "test/security/sign-in-review.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "an IdP identity outside the organisation's email domains (finding 7) is refused, even when a member holds that email, and binds nothing",
    },
    mutation: {
      file: "packages/db/src/sign-in.ts",
      find: "  IF NOT EXISTS (SELECT 1 FROM public.sso_domains d",
      replace: "  IF false AND NOT EXISTS (SELECT 1 FROM public.sso_domains d",
      why: "sign_in_member matches the IdP's email against every member, whatever its domain",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a DCR client's name written with Unicode look-alikes (finding 9) one dot leader: the consent heading never reads as claude.ai",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/consent-client.ts",
      in: "readable",
      find: 'name.normalize("NFKC")',
      replace: "name",
      why: "the client's name is matched as written, so U+2024 ONE DOT LEADER hides a domain",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a malformed body on the sign-in forms (finding 10) POST /sign-in/token with a broken multipart body answers North's page with 400",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/routes.ts",
      find: '  app.use("*", signInForms);\n',
      replace: "",
      why: "each handler parses its body itself, and a broken one throws into a JSON 500",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a malformed body on the sign-in forms (finding 10) reads only what North's forms send: a well-formed multipart form is refused too",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/form-body.ts",
      in: "parsed",
      find: "type === FORM_TYPE &&",
      replace: '(type === FORM_TYPE || type === "multipart/form-data") &&',
      why: "the sign-in pages also read multipart bodies, which none of their forms sends",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a replayed authorization code (finding 11) revokes the grant the code opened: the first redemption's access token stops working",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/token-endpoint.ts",
      in: "buildTokenRoutes",
      find: 'if (redeemed && response.status === 400) await revokeFor(deps, redeemed, "code_reuse");',
      replace: "",
      why: "a replayed code is refused but the grant it opened lives on",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a replayed authorization code (finding 11) leaves the grant alone when a code nobody redeemed is refused",
    },
    mutation: {
      in: "redeemedCodeRow",
      find: ".where(eq(ast.oauthRefreshToken.authorizationCodeId, storedTokenHash(code)))",
      replace: ".where(eq(ast.oauthRefreshToken.clientId, code))",
      why: "any refused code revokes the client's grant, guessed from the client instead of the code",
      also: [
        {
          in: "redeemed",
          find: "await redeemedCodeRow(deps, code)",
          replace: 'await redeemedCodeRow(deps, String(form?.get("client_id")))',
        },
      ],
    },
  },
];

export const SUITES = [SUITE];
