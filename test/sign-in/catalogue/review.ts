import type { Check, Entry } from "../../../scripts/acceptance-mutations.ts";

/**
 * Issue 21, the independent attacker's findings 7, 9, 10 and 11 against the finished sign-in:
 * an IdP identity outside the organisation's domains, consent-name look-alikes, a malformed
 * form body, and a replayed authorization code.
 */
const REVIEW = "test/security/sign-in-review.test.ts";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [REVIEW];

/** Definer functions live beside their domains' stores: entries find them anywhere. */
const DEFINERS = undefined;
const CONSENT_CLIENT = "apps/mcp-server/src/sign-in/consent-client.ts";
const ROUTES = "apps/mcp-server/src/sign-in/routes.ts";
const FORM_BODY = "apps/mcp-server/src/sign-in/form-body.ts";
const TOKENS = "apps/mcp-server/src/sign-in/token-endpoint.ts";

const review = (describe: string, title: string): Check => ({
  file: REVIEW,
  name: `${describe} ${title}`,
});
const DOMAINS = "an IdP identity outside the organisation's email domains (finding 7)";
const NAMES = "a DCR client's name written with Unicode look-alikes (finding 9)";
const BODIES = "a malformed body on the sign-in forms (finding 10)";
const REPLAY = "a replayed authorization code (finding 11)";

export const MUTATIONS: readonly Entry[] = [
  {
    check: review(DOMAINS, "is refused, even when a member holds that email, and binds nothing"),
    mutation: {
      file: DEFINERS,
      find: "  IF NOT EXISTS (SELECT 1 FROM public.sso_domains d",
      replace: "  IF false AND NOT EXISTS (SELECT 1 FROM public.sso_domains d",
      why: "sign_in_member matches the IdP's email against every member, whatever its domain",
    },
  },
  {
    check: review(NAMES, "one dot leader: the consent heading never reads as claude.ai"),
    mutation: {
      file: CONSENT_CLIENT,
      find: 'name.normalize("NFKC")',
      replace: "name",
      why: "the client's name is matched as written, so U+2024 ONE DOT LEADER hides a domain",
    },
  },
  {
    check: review(
      BODIES,
      "POST /sign-in/token with a broken multipart body answers North's page with 400",
    ),
    mutation: {
      file: ROUTES,
      find: '  app.use("*", signInForms);\n',
      replace: "",
      why: "each handler parses its body itself, and a broken one throws into a JSON 500",
    },
  },
  {
    check: review(
      BODIES,
      "reads only what North's forms send: a well-formed multipart form is refused too",
    ),
    mutation: {
      file: FORM_BODY,
      find: "type === FORM_TYPE &&",
      replace: '(type === FORM_TYPE || type === "multipart/form-data") &&',
      why: "the sign-in pages also read multipart bodies, which none of their forms sends",
    },
  },
  {
    check: review(
      REPLAY,
      "revokes the grant the code opened: the first redemption's access token stops working",
    ),
    mutation: {
      file: TOKENS,
      find: 'if (redeemed && response.status === 400) await revokeFor(deps, redeemed, "code_reuse");',
      replace: "",
      why: "a replayed code is refused but the grant it opened lives on",
    },
  },
  {
    check: review(REPLAY, "leaves the grant alone when a code nobody redeemed is refused"),
    mutation: {
      file: TOKENS,
      find: ".where(eq(ast.oauthRefreshToken.authorizationCodeId, storedTokenHash(code)))",
      replace: ".where(eq(ast.oauthRefreshToken.clientId, code))",
      why: "any refused code revokes the client's grant, guessed from the client instead of the code",
      also: [
        {
          file: TOKENS,
          find: "await redeemedCodeRow(deps, code)",
          replace: 'await redeemedCodeRow(deps, String(form?.get("client_id")))',
        },
      ],
    },
  },
];
