// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
import type { Check, Entry } from "../../../scripts/acceptance-mutations.ts";

/**
 * Issue 21, points 12–14: what the metadata documents and challenges advertise (member scopes,
 * admin by step-up; no DPoP, private_key_jwt or back-channel logout), the cloud metadata
 * addresses the CIMD transport refuses, and the IdP callback the CLI prints.
 */

const STEP_UP = "test/security/sign-in-step-up.test.ts";
const METADATA = "test/security/sign-in-metadata.test.ts";
const SSO_REDIRECT = "test/cli-sso-redirect.test.ts";
const FETCH_UNIT = "apps/mcp-server/src/sign-in/metadata-fetch.test.ts";

const APP = "apps/mcp-server/src/app.ts";
const OAUTH = "apps/mcp-server/src/oauth.ts";
const FORGET = "apps/mcp-server/src/capabilities/memory/forget.ts";
const PROTOCOL = "apps/mcp-server/src/sign-in/protocol.ts";
const TOKENS = "apps/mcp-server/src/sign-in/token-endpoint.ts";
const METADATA_FETCH = "apps/mcp-server/src/sign-in/metadata-fetch.ts";
const CLI_SIGN_IN = "apps/mcp-server/src/cli/sign-in.ts";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [STEP_UP, METADATA, SSO_REDIRECT];

const stepUp = (title: string): Check => ({
  file: STEP_UP,
  name: `hosts get member scopes; a manager steps up to admin ${title}`,
});
const metadata = (title: string): Check => ({
  file: METADATA,
  name: `the authorization server advertises only what North does ${title}`,
});

const STEP_UP_DECISION = 'return others > 0 ? ["admin"] : [];';

export const MUTATIONS: readonly Entry[] = [
  {
    check: stepUp(
      "names only the member scopes in the protected-resource metadata and the 401 challenge",
    ),
    mutation: {
      why: "the 401 challenge names no scope again, so hosts fall back to whatever they ask for",
      file: APP,
      find: 'const unauthorized = metadataUrl ? `${challenge}, scope="${MEMBER_SCOPES.join(" ")}"` : challenge;',
      replace: "const unauthorized = challenge;",
    },
  },
  {
    check: stepUp("gives a manager's first connection a token without admin"),
    mutation: {
      why: "the protected-resource metadata lists all four scopes, admin included",
      file: OAUTH,
      find: "scopes_supported: [...MEMBER_SCOPES],",
      replace: "scopes_supported: [...SCOPES],",
    },
  },
  {
    check: stepUp(
      "steps a manager up when colleagues' memories would remain, then erases them all in one call",
    ),
    mutation: {
      why: "forget never asks for admin: the manager's erasure silently leaves colleagues' memories",
      file: FORGET,
      find: STEP_UP_DECISION,
      replace: "return [];",
    },
  },
  {
    check: stepUp("steps a manager up to forget one memory a colleague wrote, named by id"),
    mutation: {
      why: "only an erasure by subject asks for admin; one by id is refused as forbidden",
      file: FORGET,
      find: "    if (!call.ok) return [];",
      replace: "    if (!call.ok || !call.bySubject) return [];",
    },
  },
  {
    check: stepUp("never steps a plain member up: their erasure runs and counts what others wrote"),
    mutation: {
      why: "the step-up forgets that only a manager can ever hold admin",
      file: FORGET,
      find: 'if (ctx.principal.role !== "manager" || ctx.principal.scopes.includes("admin")) return [];',
      replace: 'if (ctx.principal.scopes.includes("admin")) return [];',
    },
  },
  {
    check: stepUp("does not step a manager up when nothing a colleague wrote is at stake"),
    mutation: {
      why: "every manager erasure asks for admin, even of the manager's own memories",
      file: FORGET,
      find: STEP_UP_DECISION,
      replace: 'return ["admin"];',
    },
  },
  {
    check: metadata("publishes exactly the fields North serves, each for a reason"),
    mutation: {
      why: "a library default North does not support (DPoP) is advertised again",
      file: PROTOCOL,
      find: '  "authorization_response_iss_parameter_supported",',
      replace:
        '  "authorization_response_iss_parameter_supported",\n  "dpop_signing_alg_values_supported",',
    },
  },
  {
    check: metadata("registers a confidential client with a secret it must then present"),
    mutation: {
      why: "DCR narrowed to public clients while the metadata still lists client secrets",
      file: PROTOCOL,
      find: 'const CLIENT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"];',
      replace: 'const CLIENT_AUTH_METHODS = ["none"];',
    },
  },
  {
    check: metadata("refuses a registration that asks for private_key_jwt"),
    mutation: {
      why: "DCR passes any token_endpoint_auth_method on to the library",
      file: PROTOCOL,
      find: "if (method !== undefined && !CLIENT_AUTH_METHODS.includes(method as string)) {",
      replace: 'if (method === "never") {',
    },
  },
  {
    check: metadata("refuses a registration with a back-channel logout URI"),
    mutation: {
      why: "DCR checks only the session flag of back-channel logout, not the URI",
      file: PROTOCOL,
      find: "if (body.backchannel_logout_uri !== undefined || body.backchannel_logout_session_required) {",
      replace: "if (body.backchannel_logout_session_required) {",
    },
  },
  {
    check: metadata("refuses a registration that asks for DPoP-bound access tokens"),
    mutation: {
      why: "DCR lets a client require DPoP-bound tokens",
      file: PROTOCOL,
      find: "if (body.dpop_bound_access_tokens === true)",
      replace: 'if (body.dpop_bound_access_tokens === "never")',
    },
  },
  {
    check: metadata("refuses a private_key_jwt client assertion from a metadata-document client"),
    mutation: {
      why: "client assertions reach the library, which verifies them for a CIMD client",
      file: TOKENS,
      find: 'if (form?.has("client_assertion") || form?.has("client_assertion_type")) {',
      replace: "if (false) {",
    },
  },
  {
    check: metadata(
      "issues bearer tokens, never DPoP-bound ones, to a client that sends DPoP proofs",
    ),
    mutation: {
      why: "the DPoP header reaches the library, which binds tokens nobody checks",
      file: PROTOCOL,
      find: "auth.handler(withoutDpop(request))",
      replace: "auth.handler(request)",
    },
  },
  {
    check: {
      file: FETCH_UNIT,
      name: "cloud metadata addresses, refused by name refuses 168.63.129.16, literal or resolved, without connecting",
    },
    mutation: {
      why: "the named cloud metadata addresses are dropped, and ipaddr.js calls WireServer unicast",
      file: METADATA_FETCH,
      find: "if (CLOUD_METADATA.has(parsed.toNormalizedString())) return false;",
      replace: "",
    },
  },
  {
    check: {
      file: SSO_REDIRECT,
      name: "north org sso show names the callback the running server uses, with a configured host and port",
    },
    mutation: {
      why: "the CLI builds the callback on 127.0.0.1 whatever host serve listens on",
      file: CLI_SIGN_IN,
      find: "return `${publicBaseUrl(config)}/sign-in/callback`;",
      replace:
        'return `${config.NORTH_PUBLIC_URL?.replace(/\\/$/, "") ?? `http://127.0.0.1:${config.NORTH_PORT}`}/sign-in/callback`;',
    },
  },
];
