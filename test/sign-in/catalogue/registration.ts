// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of test/security/sign-in-consent-names.test.ts, test/security/sign-in-registration.test.ts. */
import type { Entry } from "../../support/catalogue.ts";

const SUITE_1 = "test/security/sign-in-consent-names.test.ts";
const SUITE_2 = "test/security/sign-in-registration.test.ts";

export const SUITES = [SUITE_1, SUITE_2];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE_1,
      name: "the consent page names who receives the grant names the redirect's host, labels a registered client unverified and drops the site it claims",
    },
    mutation: {
      in: "describeConsentClient",
      find: "home.origin === redirect.origin",
      replace: "true",
      why: "the client's self-declared client_uri is shown whatever host the code goes to",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the consent page names who receives the grant shows a registered client's own web address when it shares the redirect's origin",
    },
    mutation: {
      in: "describeConsentClient",
      find: "? home.href",
      replace: "? null",
      why: "the client_uri is never shown, even on the redirect's own origin",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the consent page names who receives the grant names a metadata-document client's document host and says a loopback app runs on this computer",
    },
    mutation: {
      in: "describeConsentClient",
      find: "documentHost: metadataDocument ?",
      replace: "documentHost: false ?",
      why: "the host a metadata document was read from is not named",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "registration is budgeted per source address refuses a burst of registrations from one address past its budget, while another address still registers",
    },
    mutation: {
      in: "createRegistrationLimits",
      find: "if (decision.allowed) return null;",
      replace: "return null;",
      why: "the register endpoint spends the budget but never refuses",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "registration is budgeted per source address refuses metadata-document resolutions from one address past its budget, while another address still resolves",
    },
    mutation: {
      in: "createRegistrationLimits",
      find: "if (scope) {",
      replace: "if (false) {",
      why: "the metadata transport fetches without spending the requesting address's budget",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "registered metadata is capped refuses an oversized client_name with invalid_client_metadata naming it",
    },
    mutation: {
      in: "registrationCaps",
      find: "client_name: short(200)",
      replace: "client_name: short(100_000)",
      why: "the client name is stored whatever its size",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "registered metadata is capped refuses more than ten redirect URIs, or an oversized one, with invalid_redirect_uri",
    },
    mutation: {
      in: "uris",
      find: "const uris = z.array(uri).max(MAX_REDIRECT_URIS);",
      replace: "const uris = z.array(uri);",
      why: "a client registers any number of redirect URIs",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "clients nobody consented to are swept after a day deletes a client that never received a consent once it is a day old",
    },
    mutation: {
      in: "unused",
      find: "lt(client.createdAt, cutoff),",
      replace: "lt(client.createdAt, new Date(0)),",
      why: "the sweep never finds a client old enough",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "clients nobody consented to are swept after a day deletes a day-old metadata-document client nobody consented to when another is looked up",
    },
    mutation: {
      in: "createRegistrationLimits",
      find: "scope.fetched = true;",
      replace: "",
      why: "a metadata lookup never triggers the sweep, so metadata-document clients pile up",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "clients nobody consented to are swept after a day keeps a client that has a consent or a refresh token, and one younger than a day",
    },
    mutation: {
      in: "unused",
      find: "eq(ast.oauthConsent.clientId, client.clientId)",
      replace: "eq(ast.oauthConsent.clientId, 'no such client')",
      why: "the sweep ignores consents and deletes a client a member consented to",
    },
  },
];
