import type { Check, Entry } from "../../../scripts/acceptance-mutations.ts";

const SUITE = "test/security/sign-in-grants.test.ts";
const ENTITLEMENT = "apps/mcp-server/src/sign-in/entitlement.ts";
const SESSIONS = "apps/mcp-server/src/sign-in/browser-session.ts";
const PROTOCOL = "apps/mcp-server/src/sign-in/protocol.ts";
const ROUTES = "apps/mcp-server/src/sign-in/routes.ts";
const CONSENT = "apps/mcp-server/src/sign-in/consent.ts";
const DEFINERS = "packages/db/src/definer-functions.ts";
const DIRECTORY = "packages/db/src/directory.ts";

const check = (describe: string, title: string): Check => ({
  file: SUITE,
  name: `${describe} ${title}`,
});
const CAP = "the scope cap of a token sign-in lives on the server";
const ENDS = "a grant ends when what opened it ends";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [SUITE];

const uncapped = {
  file: ENTITLEMENT,
  find: "return allowed.filter((s) => s === OFFLINE_ACCESS || record.scopeCap.includes(s));",
  replace: "return allowed;",
  why: "a token sign-in grants the role's whole entitlement, not the token's scopes",
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
      find: "AND (g.api_token_id IS NULL OR EXISTS (",
      replace: "AND (true OR EXISTS (",
      why: "the grant check forgets the API token that opened the grant",
    },
  },
  {
    check: check(ENDS, "an expired API token ends the grant it opened"),
    mutation: {
      file: DEFINERS,
      find: "AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now())))",
      replace: "AND true))",
      why: "the grant check reads the opening token's revocation but not its expiry",
    },
  },
  {
    check: check(ENDS, "refresh rotation never carries a grant past 30 days from its consent"),
    mutation: {
      file: PROTOCOL,
      find: "if (response.ok) await clipToGrant(response, row);",
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
      file: ROUTES,
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
      file: PROTOCOL,
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
      find: "AND (p_issued_at IS NULL",
      replace: "AND (true",
      why: "the grant check asks only whether some consent exists for the pair",
    },
  },
  {
    check: check(
      "the authorization server's browser session",
      "signs out, after which the same browser must sign in again to consent",
    ),
    mutation: {
      file: CONSENT,
      find: "await deps.sessions.end(c.req.raw.headers);",
      replace: "",
      why: "sign-out shows its page but leaves the session open",
    },
  },
];
