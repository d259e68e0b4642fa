// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * Issue 21, points 12–14: what the metadata documents and challenges advertise (member scopes,
 * admin by step-up; no DPoP, private_key_jwt or back-channel logout), the cloud metadata
 * addresses the CIMD transport refuses, and the IdP callback the CLI prints.
 */
import type { Entry } from "../../support/catalogue.ts";

const SUITE_1 = "test/security/sign-in-step-up.test.ts";
const SUITE_2 = "test/security/sign-in-metadata.test.ts";
const SUITE_3 = "test/cli-sso-redirect.test.ts";

export const SUITES = [SUITE_1, SUITE_2, SUITE_3];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE_1,
      name: "hosts get member scopes; a manager steps up to admin names only the member scopes in the protected-resource metadata and the 401 challenge",
    },
    mutation: {
      in: "unauthorized",
      find: 'const unauthorized = metadataUrl ? `${challenge}, scope="${MEMBER_SCOPES.join(" ")}"` : challenge;',
      replace: "const unauthorized = challenge;",
      why: "the 401 challenge names no scope again, so hosts fall back to whatever they ask for",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "hosts get member scopes; a manager steps up to admin gives a manager's first connection a token without admin",
    },
    mutation: {
      in: "protectedResourceMetadata",
      find: "scopes_supported: [...MEMBER_SCOPES],",
      replace: "scopes_supported: [...SCOPES],",
      why: "the protected-resource metadata lists all four scopes, admin included",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "hosts get member scopes; a manager steps up to admin steps a manager up when colleagues' memories would remain, then erases them all in one call",
    },
    mutation: {
      in: "forgetTool",
      find: 'return others > 0 ? ["admin"] : [];',
      replace: "return [];",
      why: "forget never asks for admin: the manager's erasure silently leaves colleagues' memories",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "hosts get member scopes; a manager steps up to admin steps a manager up to forget one memory a colleague wrote, named by id",
    },
    mutation: {
      in: "forgetTool",
      find: "    if (!call.ok) return [];",
      replace: "    if (!call.ok || !call.bySubject) return [];",
      why: "only an erasure by subject asks for admin; one by id is refused as forbidden",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "hosts get member scopes; a manager steps up to admin never steps a plain member up: their erasure runs and counts what others wrote",
    },
    mutation: {
      in: "forgetTool",
      find: 'if (ctx.principal.role !== "manager" || ctx.principal.scopes.includes("admin")) return [];',
      replace: 'if (ctx.principal.scopes.includes("admin")) return [];',
      why: "the step-up forgets that only a manager can ever hold admin, and asks whatever the grant can reach",
      // Two layers: the tool's role check, and the runner's "only a step-up that can succeed".
      also: [
        {
          in: "stepUpScopes",
          find: "const reachable = !reauthorizable || missing.every((scope) => reauthorizable.includes(scope));",
          replace: "const reachable = true;",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "hosts get member scopes; a manager steps up to admin does not step a manager up when nothing a colleague wrote is at stake",
    },
    mutation: {
      in: "forgetTool",
      find: 'return others > 0 ? ["admin"] : [];',
      replace: 'return ["admin"];',
      why: "every manager erasure asks for admin, even of the manager's own memories",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "the authorization server advertises only what North does publishes exactly the fields North serves, each for a reason",
    },
    mutation: {
      in: "ADVERTISED",
      find: '  "authorization_response_iss_parameter_supported",',
      replace:
        '  "authorization_response_iss_parameter_supported",\n  "dpop_signing_alg_values_supported",',
      why: "a library default North does not support (DPoP) is advertised again",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "the authorization server advertises only what North does registers a confidential client with a secret it must then present",
    },
    mutation: {
      in: "CLIENT_AUTH_METHODS",
      find: 'const CLIENT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"];',
      replace: 'const CLIENT_AUTH_METHODS = ["none"];',
      why: "DCR narrowed to public clients while the metadata still lists client secrets",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "the authorization server advertises only what North does refuses a registration that asks for private_key_jwt",
    },
    mutation: {
      in: "unsupportedClientMetadata",
      find: "if (method !== undefined && !CLIENT_AUTH_METHODS.includes(method as string)) {",
      replace: 'if (method === "never") {',
      why: "DCR passes any token_endpoint_auth_method on to the library",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "the authorization server advertises only what North does refuses a registration with a back-channel logout URI",
    },
    mutation: {
      in: "unsupportedClientMetadata",
      find: "if (body.backchannel_logout_uri !== undefined || body.backchannel_logout_session_required) {",
      replace: "if (body.backchannel_logout_session_required) {",
      why: "DCR checks only the session flag of back-channel logout, not the URI",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "the authorization server advertises only what North does refuses a registration that asks for DPoP-bound access tokens",
    },
    mutation: {
      in: "unsupportedClientMetadata",
      find: "if (body.dpop_bound_access_tokens === true)",
      replace: 'if (body.dpop_bound_access_tokens === "never")',
      why: "DCR lets a client require DPoP-bound tokens",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "the authorization server advertises only what North does refuses a private_key_jwt client assertion from a metadata-document client",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/token-endpoint.ts",
      in: "buildTokenRoutes",
      find: 'if (form?.has("client_assertion") || form?.has("client_assertion_type")) {',
      replace: "if (false) {",
      why: "client assertions reach the library, which verifies them for a CIMD client",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "the authorization server advertises only what North does issues bearer tokens, never DPoP-bound ones, to a client that sends DPoP proofs",
    },
    mutation: {
      in: "forward",
      find: "auth.handler(withoutDpop(request))",
      replace: "auth.handler(request)",
      why: "the DPoP header reaches the library, which binds tokens nobody checks",
    },
  },
  {
    check: {
      file: "apps/mcp-server/src/sign-in/metadata-fetch.test.ts",
      name: "cloud metadata addresses, refused by name refuses 168.63.129.16, literal or resolved, without connecting",
    },
    mutation: {
      in: "isPublicUnicastAddress",
      find: "if (CLOUD_METADATA.has(parsed.toNormalizedString())) return false;",
      replace: "",
      why: "the named cloud metadata addresses are dropped, and ipaddr.js calls WireServer unicast",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "north org sso show names the callback the running server uses, with a configured host and port",
    },
    mutation: {
      in: "redirectUri",
      find: "return `${publicBaseUrl(config)}/sign-in/callback`;",
      replace:
        'return `${config.NORTH_PUBLIC_URL?.replace(/\\/$/, "") ?? `http://127.0.0.1:${config.NORTH_PORT}`}/sign-in/callback`;',
      why: "the CLI builds the callback on 127.0.0.1 whatever host serve listens on",
    },
  },
];
