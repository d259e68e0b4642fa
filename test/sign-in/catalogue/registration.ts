import type { Entry } from "../../../scripts/acceptance-mutations.ts";

const CONSENT_NAMES = "test/security/sign-in-consent-names.test.ts";
const CONSENT_CLIENT = "apps/mcp-server/src/sign-in/consent-client.ts";
const NAMES = "the consent page names who receives the grant";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [CONSENT_NAMES];

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
];
