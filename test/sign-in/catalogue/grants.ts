// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
import type { Check, Entry } from "../../../scripts/acceptance-mutations.ts";

const SUITE = "test/security/sign-in-grants.test.ts";
const ENTITLEMENT = "apps/mcp-server/src/sign-in/entitlement.ts";
const SESSIONS = "apps/mcp-server/src/sign-in/browser-session.ts";
const PROTOCOL = "apps/mcp-server/src/sign-in/protocol.ts";
const TOKENS = "apps/mcp-server/src/sign-in/token-endpoint.ts";
const TOKEN_SIGN_IN = "apps/mcp-server/src/sign-in/routes/token.ts";
const CONSENT = "apps/mcp-server/src/sign-in/routes/consent.ts";
const SIGN_OUT = "apps/mcp-server/src/sign-in/routes/sign-out.ts";
/** Definer functions live beside their domains' stores: entries find them anywhere. */
const DEFINERS = undefined;
const DIRECTORY = "packages/db/src/directory.ts";

const check = (describe: string, title: string): Check => ({
  file: SUITE,
  name: `${describe} ${title}`,
});
const CAP = "the scope cap of a token sign-in lives on the server";
const ENDS = "a grant ends when what opened it ends";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [
  SUITE,
  "test/security/sign-in-grant-reuse.test.ts",
  "test/security/sign-in-grant-boundaries.test.ts",
];

const uncapped = {
  file: ENTITLEMENT,
  find: "return allowed.filter((s) => s === OFFLINE_ACCESS || record.scopeCap.includes(s));",
  replace: "return allowed;",
  why: "a token sign-in grants the role's whole entitlement, not the token's scopes",
};

const REUSE_SUITE = "test/security/sign-in-grant-reuse.test.ts";
const reuse = (describe: string, title: string): Check => ({
  file: REUSE_SUITE,
  name: `${describe} ${title}`,
});
const boundary = (describe: string, title: string): Check => ({
  file: "test/security/sign-in-grant-boundaries.test.ts",
  name: `${describe} ${title}`,
});
const EARLIER = "a token of an earlier grant cannot end the member's current one";
const earlierGrantTaken = {
  file: TOKENS,
  find: "if (spent && !(await ofCurrentGrant(deps, spent))) {",
  replace: "if (false) {",
  why: "a token of an ended grant reaches the library, which revokes the member's current tokens",
};
const REMEMBERED = "a remembered consent is reused only by the sign-in that opened its grant";
const SESSION_RECORD = "apps/mcp-server/src/sign-in/protocol.ts";
const OAUTH = "apps/mcp-server/src/oauth.ts";

const consentAlwaysReused = {
  file: SESSION_RECORD,
  find: 'if (!reusable) params.set("prompt", "consent");',
  replace: "",
  why: "a remembered consent answers any signed-in session with a code, whoever opened its grant",
};

export const MUTATIONS: readonly Entry[] = [
  {
    check: check(
      CAP,
      "a read-only token's session stays read-only when the browser drops its cookies",
    ),
    mutation: uncapped,
  },
  { check: check(CAP, "a manager's read-only token never becomes admin"), mutation: uncapped },
  {
    check: check(CAP, "a browser session North holds no record of grants nothing"),
    mutation: {
      file: SESSIONS,
      find: "if (!record || !member || member.organizationId !== record.organizationId) {",
      replace: "if (!member) {",
      why: "a library session counts as signed in without North's record of how",
    },
  },
  {
    check: check(
      ENDS,
      "revoking the API token that opened a grant ends its access and its refresh",
    ),
    mutation: {
      file: DEFINERS,
      find: 'AND (g.api_token_id IS NULL OR (${TOKEN_LIVE("g.api_token_id", "p_user_id")}',
      replace: "AND (g.api_token_id IS NULL OR (true",
      why: "the grant check forgets the API token that opened the grant",
    },
  },
  {
    check: check(ENDS, "an expired API token ends the grant it opened"),
    mutation: {
      file: DEFINERS,
      find: "AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now()))`;",
      replace: "AND true)`;",
      why: "the grant check reads the opening token's revocation but not its expiry",
    },
  },
  {
    check: check(ENDS, "refresh rotation never carries a grant past 30 days from its consent"),
    mutation: {
      file: TOKENS,
      find: "if (response.ok) await clipToGrant(deps, response, row);",
      replace: "",
      why: "each rotation keeps the library's fresh 30-day refresh token",
    },
  },
  {
    check: check(ENDS, "a grant past its 30 days is refused on the next call and at refresh"),
    mutation: {
      file: DEFINERS,
      find: "AND g.expires_at > pg_catalog.now()",
      replace: "AND true",
      why: "the grant check ignores the grant's absolute lifetime",
    },
  },
  {
    check: check(
      ENDS,
      "an organisation with an IdP does not take pasted API tokens on the sign-in page",
    ),
    mutation: {
      file: TOKEN_SIGN_IN,
      find: "if (await ssoConnectionForOrganization(deps.db, principal.organizationId)) {",
      replace: "if (false) {",
      why: "the token form signs in members of an organisation that has an IdP",
    },
  },
  {
    check: check(
      "member removal ends OAuth access",
      "removing a member ends their OAuth grants at once, and reinstating them revives none",
    ),
    mutation: {
      file: DIRECTORY,
      find: "await endMemberOAuth(tx, params.userId);",
      replace: "",
      why: "removing a member revokes API tokens only, leaving consents and refresh tokens",
    },
  },
  {
    check: check(
      "member removal ends OAuth access",
      "the token endpoint refuses a refresh for a member who is no longer active",
    ),
    mutation: {
      file: TOKENS,
      find: "!(await resolveOAuthGrant(deps.db, row.userId, row.clientId, null))",
      replace: "false",
      why: "the token endpoint rotates a refresh token without asking whether its grant still holds",
    },
  },
  {
    check: check(
      "a revocation cannot be undone by consenting again",
      "access tokens issued before a revoked grant stay refused after the member reconnects",
    ),
    mutation: {
      file: DEFINERS,
      find: "AND (p_grant_id IS NULL OR g.id = p_grant_id)",
      replace: "AND true",
      why: "the grant check asks only whether some consent exists for the pair",
    },
  },
  {
    check: check(
      "the authorization server's browser session",
      "signs out, after which the same browser must sign in again to consent",
    ),
    mutation: {
      file: SIGN_OUT,
      find: "await deps.sessions.end(c.req.raw.headers);",
      replace: "",
      why: "sign-out shows its page but leaves the session open",
    },
  },
  {
    check: reuse(
      REMEMBERED,
      "a manager's read-only token asking for admin alone gets no admin from the manager's consent",
    ),
    mutation: consentAlwaysReused,
  },
  {
    check: reuse(
      REMEMBERED,
      "a read-only token asking for the write scopes alone gets none of them",
    ),
    mutation: consentAlwaysReused,
  },
  {
    check: reuse(
      REMEMBERED,
      "a leaked token's sign-in cannot mint tokens under the grant the member's own token opened",
    ),
    mutation: {
      file: SESSION_RECORD,
      find: "return opened !== null && sameSignIn(opened, signedIn.record);",
      replace: "return opened !== null;",
      why: "any sign-in of the member reuses a grant another token opened",
    },
  },
  {
    check: reuse(
      REMEMBERED,
      "the member's own sign-in reuses the remembered consent without asking",
    ),
    mutation: {
      file: SESSION_RECORD,
      find: "return opened !== null && sameSignIn(opened, signedIn.record);",
      replace: "return false;",
      why: "North asks for consent again at every authorization, remembered or not",
    },
  },
  {
    check: reuse(
      REMEMBERED,
      "a browser session opened with a token mints nothing once that token is revoked",
    ),
    mutation: {
      file: DEFINERS,
      find: 'AND (r.api_token_id IS NULL OR (${TOKEN_LIVE("r.api_token_id", "p_user_id")}',
      replace: 'AND (true OR (${TOKEN_LIVE("r.api_token_id", "p_user_id")}',
      why: "a browser session's record outlives the API token that opened it",
    },
  },
  {
    check: reuse(
      REMEMBERED,
      "every access token is capped by what opened its grant, whatever scopes it names",
    ),
    mutation: {
      file: OAUTH,
      find: "(!grant.scopeCap || grant.scopeCap.includes(s))",
      replace: "true",
      why: "the resource server trusts the token's scopes over the grant's cap",
    },
  },
  {
    check: reuse(
      "the token endpoint reads each parameter once",
      "refuses a refresh that names its refresh token twice",
    ),
    mutation: {
      file: TOKENS,
      find: "if (new Set(names).size !== names.length) {",
      replace: "if (false) {",
      why: "North checks a parameter's first value while the library uses its last",
    },
  },
  {
    check: reuse(
      "a re-consent and a refused consent",
      "a token the thief minted just before the member reconnects is refused after it",
    ),
    mutation: {
      file: DEFINERS,
      find: "AND (p_grant_id IS NULL OR g.id = p_grant_id)",
      replace: "AND true",
      why: "the grant check ignores which grant the token was issued under",
    },
  },
  {
    check: reuse(
      "a re-consent and a refused consent",
      "a consent page whose request no longer holds shows North's page and leaves the grant",
    ),
    mutation: {
      file: CONSENT,
      find: "if (!result?.url) return consentExpired(c);",
      replace: 'if (!result?.url) throw new Error("the consent endpoint refused");',
      why: "a refused consent reaches the browser as an internal error",
    },
  },
  {
    check: reuse(
      "an organisation that moves to an IdP",
      "ends its token sign-ins: sessions mint nothing, grants opened by token are refused",
    ),
    mutation: {
      file: DEFINERS,
      find: 'AND ${TOKEN_SIGN_IN_ALLOWED("g.organization_id")}))',
      replace: "))",
      why: "a grant opened by token outlives the organisation's move to an IdP",
    },
  },
  {
    check: boundary(
      EARLIER,
      "a refresh token the re-consent revoked, replayed, leaves the new grant alone",
    ),
    mutation: earlierGrantTaken,
  },
  {
    check: boundary(
      EARLIER,
      "a refresh token from before the member's removal leaves their grant after reinstatement",
    ),
    mutation: {
      ...earlierGrantTaken,
      also: [
        {
          file: TOKENS,
          find: "  if (!(await ofCurrentGrant(deps, row))) return;",
          replace: "",
        },
      ],
    },
  },
  {
    check: boundary(
      EARLIER,
      "an authorization code of an earlier grant, replayed, leaves the new grant alone",
    ),
    mutation: {
      ...earlierGrantTaken,
      also: [
        {
          file: TOKENS,
          find: "  if (!(await ofCurrentGrant(deps, row))) return;",
          replace: "",
        },
      ],
    },
  },
  {
    check: boundary(
      "demoting a manager",
      "ends their grants that hold admin, so a later promotion revives no admin connector",
    ),
    mutation: {
      file: DIRECTORY,
      find: "    await endAdminGrants(tx, params.userId);",
      replace: "",
      why: "demotion revokes admin API tokens only, leaving OAuth grants that hold admin",
    },
  },
  {
    check: boundary(
      "a step-up that cannot succeed is not asked",
      "a manager's grant opened by a token without admin forgets its own, without a 403 oracle",
    ),
    mutation: {
      file: "apps/mcp-server/src/step-up.ts",
      find: "if (missing.length > 0 && reachable) {",
      replace: "if (missing.length > 0) {",
      why: "a step-up is asked even when re-authorizing can never add the scope",
    },
  },
  {
    check: boundary(
      "the consent page under odd input",
      "a control character in client_id gets North's page at authorize and on the consent page",
    ),
    mutation: {
      file: PROTOCOL,
      find: "  !/[\\u0000-\\u001f\\u007f]/.test(value);",
      replace: "  true;",
      why: "a client id with a NUL reaches PostgreSQL, which fails the request with a 500",
    },
  },
];
