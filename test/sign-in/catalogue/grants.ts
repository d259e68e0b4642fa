// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of test/security/sign-in-grants.test.ts, test/security/sign-in-grant-reuse.test.ts, test/security/sign-in-grant-boundaries.test.ts. */
import type { Entry } from "../../support/catalogue.ts";

const SUITE_1 = "test/security/sign-in-grants.test.ts";
const SUITE_2 = "test/security/sign-in-grant-reuse.test.ts";
const SUITE_3 = "test/security/sign-in-grant-boundaries.test.ts";

export const SUITES = [SUITE_1, SUITE_2, SUITE_3];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE_1,
      name: "the scope cap of a token sign-in lives on the server a read-only token's session stays read-only when the browser drops its cookies",
    },
    mutation: {
      in: "grantableScopes",
      find: "return allowed.filter((s) => s === OFFLINE_ACCESS || record.scopeCap.includes(s));",
      replace: "return allowed;",
      why: "a token sign-in grants the role's whole entitlement, not the token's scopes",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the scope cap of a token sign-in lives on the server a manager's read-only token never becomes admin",
    },
    mutation: {
      in: "grantableScopes",
      find: "return allowed.filter((s) => s === OFFLINE_ACCESS || record.scopeCap.includes(s));",
      replace: "return allowed;",
      why: "a token sign-in grants the role's whole entitlement, not the token's scopes",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the scope cap of a token sign-in lives on the server a browser session North holds no record of grants nothing",
    },
    mutation: {
      in: "createBrowserSessions",
      find: "if (!record || !member || member.organizationId !== record.organizationId) {",
      replace: "if (!member) {",
      why: "a library session counts as signed in without North's record of how",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a grant ends when what opened it ends revoking the API token that opened a grant ends its access and its refresh",
    },
    mutation: {
      in: "resolveGrantDefiner",
      find: 'AND (g.api_token_id IS NULL OR (${TOKEN_LIVE("g.api_token_id", "p_user_id")}',
      replace: "AND (g.api_token_id IS NULL OR (true",
      why: "the grant check forgets the API token that opened the grant",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a grant ends when what opened it ends an expired API token ends the grant it opened",
    },
    mutation: {
      in: "TOKEN_LIVE",
      find: "AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now()))`;",
      replace: "AND true)`;",
      why: "the grant check reads the opening token's revocation but not its expiry",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a grant ends when what opened it ends refresh rotation never carries a grant past 30 days from its consent",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/token-endpoint.ts",
      in: "buildTokenRoutes",
      find: "if (response.ok) await clipToGrant(deps, response, row);",
      replace: "",
      why: "each rotation keeps the library's fresh 30-day refresh token",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a grant ends when what opened it ends a grant past its 30 days is refused on the next call and at refresh",
    },
    mutation: {
      in: "resolveGrantDefiner",
      find: "AND g.expires_at > pg_catalog.now()",
      replace: "AND true",
      why: "the grant check ignores the grant's absolute lifetime",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a grant ends when what opened it ends an organisation with an IdP does not take pasted API tokens on the sign-in page",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/routes/token.ts",
      in: "buildTokenRoutes",
      find: "if (await ssoConnectionForOrganization(deps.db, principal.organizationId)) {",
      replace: "if (false) {",
      why: "the token form signs in members of an organisation that has an IdP",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "member removal ends OAuth access removing a member ends their OAuth grants at once, and reinstating them revives none",
    },
    mutation: {
      in: "removeMember",
      find: "await endMemberOAuth(tx, params.userId);",
      replace: "",
      why: "removing a member revokes API tokens only, leaving consents and refresh tokens",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "member removal ends OAuth access the token endpoint refuses a refresh for a member who is no longer active",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/token-endpoint.ts",
      in: "buildTokenRoutes",
      find: "!(await resolveOAuthGrant(deps.db, row.userId, row.clientId, null))",
      replace: "false",
      why: "the token endpoint rotates a refresh token without asking whether its grant still holds",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a revocation cannot be undone by consenting again access tokens issued before a revoked grant stay refused after the member reconnects",
    },
    mutation: {
      in: "resolveGrantDefiner",
      find: "AND (p_grant_id IS NULL OR g.id = p_grant_id)",
      replace: "AND true",
      why: "the grant check asks only whether some consent exists for the pair",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the authorization server's browser session signs out, after which the same browser must sign in again to consent",
    },
    mutation: {
      in: "buildSignOutRoutes",
      find: "await deps.sessions.end(c.req.raw.headers);",
      replace: "",
      why: "sign-out shows its page but leaves the session open",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a remembered consent is reused only by the sign-in that opened its grant a manager's read-only token asking for admin alone gets no admin from the manager's consent",
    },
    mutation: {
      in: "buildProtocolRoutes",
      find: 'if (!reusable) params.set("prompt", "consent");',
      replace: "",
      why: "a remembered consent answers any signed-in session with a code, whoever opened its grant",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a remembered consent is reused only by the sign-in that opened its grant a read-only token asking for the write scopes alone gets none of them",
    },
    mutation: {
      in: "buildProtocolRoutes",
      find: 'if (!reusable) params.set("prompt", "consent");',
      replace: "",
      why: "a remembered consent answers any signed-in session with a code, whoever opened its grant",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a remembered consent is reused only by the sign-in that opened its grant a leaked token's sign-in cannot mint tokens under the grant the member's own token opened",
    },
    mutation: {
      in: "grantHolds",
      find: "return opened !== null && sameSignIn(opened, signedIn.record);",
      replace: "return opened !== null;",
      why: "any sign-in of the member reuses a grant another token opened",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a remembered consent is reused only by the sign-in that opened its grant the member's own sign-in reuses the remembered consent without asking",
    },
    mutation: {
      in: "grantHolds",
      find: "return opened !== null && sameSignIn(opened, signedIn.record);",
      replace: "return false;",
      why: "North asks for consent again at every authorization, remembered or not",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a remembered consent is reused only by the sign-in that opened its grant a browser session opened with a token mints nothing once that token is revoked",
    },
    mutation: {
      in: "signInRecordDefiner",
      find: 'AND (r.api_token_id IS NULL OR (${TOKEN_LIVE("r.api_token_id", "p_user_id")}',
      replace: 'AND (true OR (${TOKEN_LIVE("r.api_token_id", "p_user_id")}',
      why: "a browser session's record outlives the API token that opened it",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a remembered consent is reused only by the sign-in that opened its grant every access token is capped by what opened its grant, whatever scopes it names",
    },
    mutation: {
      file: "apps/mcp-server/src/oauth.ts",
      in: "allowed",
      find: "(!grant.scopeCap || grant.scopeCap.includes(s))",
      replace: "true",
      why: "the resource server trusts the token's scopes over the grant's cap",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "the token endpoint reads each parameter once refuses a refresh that names its refresh token twice",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/token-endpoint.ts",
      in: "buildTokenRoutes",
      find: "if (new Set(names).size !== names.length) {",
      replace: "if (false) {",
      why: "North checks a parameter's first value while the library uses its last",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a re-consent and a refused consent a token the thief minted just before the member reconnects is refused after it",
    },
    mutation: {
      in: "resolveGrantDefiner",
      find: "AND (p_grant_id IS NULL OR g.id = p_grant_id)",
      replace: "AND true",
      why: "the grant check ignores which grant the token was issued under",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a re-consent and a refused consent a consent page whose request no longer holds shows North's page and leaves the grant",
    },
    mutation: {
      in: "buildConsentRoutes",
      find: "if (!result?.url) return consentExpired(c);",
      replace: 'if (!result?.url) throw new Error("the consent endpoint refused");',
      why: "a refused consent reaches the browser as an internal error",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "an organisation that moves to an IdP ends its token sign-ins: sessions mint nothing, grants opened by token are refused",
    },
    mutation: {
      in: "resolveGrantDefiner",
      find: 'AND ${TOKEN_SIGN_IN_ALLOWED("g.organization_id")}))',
      replace: "))",
      why: "a grant opened by token outlives the organisation's move to an IdP",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "a token of an earlier grant cannot end the member's current one a refresh token the re-consent revoked, replayed, leaves the new grant alone",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/token-endpoint.ts",
      in: "buildTokenRoutes",
      find: "if (spent && !(await ofCurrentGrant(deps, spent))) {",
      replace: "if (false) {",
      why: "a token of an ended grant reaches the library, which revokes the member's current tokens",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "a token of an earlier grant cannot end the member's current one a refresh token from before the member's removal leaves their grant after reinstatement",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/token-endpoint.ts",
      in: "buildTokenRoutes",
      find: "if (spent && !(await ofCurrentGrant(deps, spent))) {",
      replace: "if (false) {",
      why: "a token of an ended grant reaches the library, which revokes the member's current tokens",
      also: [
        {
          in: "revokeFor",
          find: "  if (!(await ofCurrentGrant(deps, row))) return;",
          replace: "",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "a token of an earlier grant cannot end the member's current one an authorization code of an earlier grant, replayed, leaves the new grant alone",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/token-endpoint.ts",
      in: "buildTokenRoutes",
      find: "if (spent && !(await ofCurrentGrant(deps, spent))) {",
      replace: "if (false) {",
      why: "a token of an ended grant reaches the library, which revokes the member's current tokens",
      also: [
        {
          in: "revokeFor",
          find: "  if (!(await ofCurrentGrant(deps, row))) return;",
          replace: "",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "demoting a manager ends their grants that hold admin, so a later promotion revives no admin connector",
    },
    mutation: {
      in: "setMemberRole",
      find: "    await endAdminGrants(tx, params.userId);",
      replace: "",
      why: "demotion revokes admin API tokens only, leaving OAuth grants that hold admin",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "a step-up that cannot succeed is not asked a manager's grant opened by a token without admin forgets its own, without a 403 oracle",
    },
    mutation: {
      in: "stepUpScopes",
      find: "if (missing.length > 0 && reachable) {",
      replace: "if (missing.length > 0) {",
      why: "a step-up is asked even when re-authorizing can never add the scope",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "the consent page under odd input a control character in client_id gets North's page at authorize and on the consent page",
    },
    mutation: {
      in: "isClientId",
      find: "  !/[\\u0000-\\u001f\\u007f]/.test(value);",
      replace: "  true;",
      why: "a client id with a NUL reaches PostgreSQL, which fails the request with a 500",
    },
  },
];
