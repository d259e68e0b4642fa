import type { Entry } from "../../../scripts/acceptance-mutations.ts";

const CONSENT_NAMES = "test/security/sign-in-consent-names.test.ts";
const CONSENT_CLIENT = "apps/mcp-server/src/sign-in/consent-client.ts";
const NAMES = "the consent page names who receives the grant";
const REGISTRATION = "test/security/sign-in-registration.test.ts";
const LIMITS = "apps/mcp-server/src/sign-in/registration-limits.ts";
const CLIENTS = "apps/mcp-server/src/sign-in/registered-clients.ts";
const BUDGET = "registration is budgeted per source address";
const CAPS = "registered metadata is capped";
const SWEEP = "clients nobody consented to are swept after a day";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [CONSENT_NAMES, REGISTRATION];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: CONSENT_NAMES,
      name: `${NAMES} names the redirect's host, labels a registered client unverified and drops the site it claims`,
    },
    mutation: {
      file: CONSENT_CLIENT,
      find: "home.origin === redirect.origin",
      replace: "true",
      why: "the client's self-declared client_uri is shown whatever host the code goes to",
    },
  },
  {
    check: {
      file: CONSENT_NAMES,
      name: `${NAMES} shows a registered client's own web address when it shares the redirect's origin`,
    },
    mutation: {
      file: CONSENT_CLIENT,
      find: "? home.href",
      replace: "? null",
      why: "the client_uri is never shown, even on the redirect's own origin",
    },
  },
  {
    check: {
      file: CONSENT_NAMES,
      name: `${NAMES} names a metadata-document client's document host and says a loopback app runs on this computer`,
    },
    mutation: {
      file: CONSENT_CLIENT,
      find: "documentHost: metadataDocument ?",
      replace: "documentHost: false ?",
      why: "the host a metadata document was read from is not named",
    },
  },
  {
    check: {
      file: REGISTRATION,
      name: `${BUDGET} refuses a burst of registrations from one address past its budget, while another address still registers`,
    },
    mutation: {
      file: LIMITS,
      find: "if (decision.allowed) return null;",
      replace: "return null;",
      why: "the register endpoint spends the budget but never refuses",
    },
  },
  {
    check: {
      file: REGISTRATION,
      name: `${BUDGET} refuses metadata-document resolutions from one address past its budget, while another address still resolves`,
    },
    mutation: {
      file: LIMITS,
      find: "if (scope) {",
      replace: "if (false) {",
      why: "the metadata transport fetches without spending the requesting address's budget",
    },
  },
  {
    check: {
      file: REGISTRATION,
      name: `${CAPS} refuses an oversized client_name with invalid_client_metadata naming it`,
    },
    mutation: {
      file: CLIENTS,
      find: "client_name: short(200)",
      replace: "client_name: short(100_000)",
      why: "the client name is stored whatever its size",
    },
  },
  {
    check: {
      file: REGISTRATION,
      name: `${CAPS} refuses more than ten redirect URIs, or an oversized one, with invalid_redirect_uri`,
    },
    mutation: {
      file: CLIENTS,
      find: "const uris = z.array(uri).max(MAX_REDIRECT_URIS);",
      replace: "const uris = z.array(uri);",
      why: "a client registers any number of redirect URIs",
    },
  },
  {
    check: {
      file: REGISTRATION,
      name: `${SWEEP} deletes a client that never received a consent once it is a day old`,
    },
    mutation: {
      file: CLIENTS,
      find: "lt(client.createdAt, cutoff),",
      replace: "lt(client.createdAt, new Date(0)),",
      why: "the sweep never finds a client old enough",
    },
  },
  {
    check: {
      file: REGISTRATION,
      name: `${SWEEP} deletes a day-old metadata-document client nobody consented to when another is looked up`,
    },
    mutation: {
      file: LIMITS,
      find: "scope.fetched = true;",
      replace: "",
      why: "a metadata lookup never triggers the sweep, so metadata-document clients pile up",
    },
  },
  {
    check: {
      file: REGISTRATION,
      name: `${SWEEP} keeps a client that has a consent or a refresh token, and one younger than a day`,
    },
    mutation: {
      file: CLIENTS,
      find: "eq(ast.oauthConsent.clientId, client.clientId)",
      replace: "eq(ast.oauthConsent.clientId, 'no such client')",
      why: "the sweep ignores consents and deletes a client a member consented to",
    },
  },
];
