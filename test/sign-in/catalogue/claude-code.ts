import type { Entry } from "../../../scripts/acceptance-mutations.ts";

const UNREACHABLE = "test/sign-in/metadata-unreachable.test.ts";
const CLAUDE_CODE = "test/sign-in/claude-code.test.ts";
const CLAUDE_CODE_STEP_UP = "test/sign-in/claude-code-step-up.test.ts";

const METADATA_FETCH = "apps/mcp-server/src/sign-in/metadata-fetch.ts";
const AUTHORIZE_ANSWER = "apps/mcp-server/src/sign-in/authorize-answer.ts";
const PINNED = "apps/mcp-server/src/sign-in/pinned-client-metadata.ts";
const PROTOCOL = "apps/mcp-server/src/sign-in/protocol.ts";
const SIGN_IN = "apps/mcp-server/src/sign-in/index.ts";
const AUTHORIZATION_SERVER = "apps/mcp-server/src/sign-in/authorization-server.ts";
const OAUTH = "apps/mcp-server/src/oauth.ts";
const WORKING_PROFILE = "apps/mcp-server/src/capabilities/working-profile/index.ts";
const FORGET = "apps/mcp-server/src/capabilities/memory/forget.ts";
const STEP_UP = "apps/mcp-server/src/step-up.ts";

const UNREADABLE = "a metadata document that cannot be read";
const PINNED_DOCUMENT = "Claude Code's pinned document (decision 032)";
const END_TO_END = "Claude Code signs in to North end to end";
const MANAGER = "Claude Code: a manager gets the member scopes and steps up to admin";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [UNREACHABLE, CLAUDE_CODE, CLAUDE_CODE_STEP_UP];

export const MUTATIONS: readonly Entry[] = [
  // Issue 21, point 11: a metadata document that cannot be fetched.
  {
    check: {
      file: UNREACHABLE,
      name: `${UNREADABLE} ends on North's page saying so, with a log line naming network`,
    },
    mutation: {
      file: METADATA_FETCH,
      why: "a dropped connection is logged as an error status",
      find: '  network: "network",',
      replace: '  network: "status",',
    },
  },
  {
    check: {
      file: UNREACHABLE,
      name: `${UNREADABLE} turns the library's other errors into a page, and keeps an error redirect to the client`,
    },
    mutation: {
      file: AUTHORIZE_ANSWER,
      why: "a redirect to the library's own error URL (which North does not serve) passes through",
      find: "    if (target.origin !== errorPage.origin || target.pathname !== errorPage.pathname) return null;",
      replace: "    return null;",
    },
  },
  {
    check: {
      file: UNREACHABLE,
      name: `${PINNED_DOCUMENT} stands in when claude.ai cannot be read (challenge)`,
    },
    mutation: {
      file: PINNED,
      why: "the pinned copy does not stand in for a challenge page",
      find: 'const STANDS_IN_FOR = new Set<MetadataFailureClass>(["network", "timeout", "status", "challenge"]);',
      replace:
        'const STANDS_IN_FOR = new Set<MetadataFailureClass>(["network", "timeout", "status"]);',
    },
  },
  {
    check: {
      file: UNREACHABLE,
      name: `${PINNED_DOCUMENT} never stands in for a withdrawn document`,
    },
    mutation: {
      file: PINNED,
      why: "a 404 (the host withdrew the client id) counts as unreachable",
      find: "const GONE = new Set([404, 410]);",
      replace: "const GONE = new Set([410]);",
    },
  },
  // Issue 21's Must-show: the Claude Code path end to end, with the real CLI.
  {
    check: {
      file: CLAUDE_CODE,
      name: `${END_TO_END} asks with its metadata document id, a loopback port and the metadata's scopes`,
    },
    mutation: {
      file: PROTOCOL,
      why: "the authorization-server metadata stops offering metadata documents (Claude Code falls back to DCR)",
      find: "  document.scopes_supported = [...SCOPES];",
      replace:
        "  document.scopes_supported = [...SCOPES]; document.client_id_metadata_document_supported = false;",
    },
  },
  {
    check: {
      file: CLAUDE_CODE,
      name: `${END_TO_END} signs in with the live document, its port accepted against portless URIs, and stores tokens`,
    },
    mutation: {
      file: SIGN_IN,
      why: "the configured transport is dropped for the default one (the pinned copy hides it)",
      find: "withPinnedClientMetadata(options.fetchClientMetadata ?? createMetadataFetch()),",
      replace: "withPinnedClientMetadata(createMetadataFetch()),",
    },
  },
  {
    check: {
      file: CLAUDE_CODE,
      name: `${END_TO_END} shows North connected in \`claude mcp list\``,
    },
    mutation: {
      file: OAUTH,
      why: "the resource server expects another token type than the one North issues",
      find: '  typ: "at+jwt",',
      replace: '  typ: "JWT",',
    },
  },
  {
    check: { file: CLAUDE_CODE, name: `${END_TO_END} calls a North tool through Claude Code` },
    mutation: {
      file: WORKING_PROFILE,
      why: "the working-profile tools need admin, so a member's host is never offered them",
      find: '  scopes: ["profile:write"],',
      replace: '  scopes: ["admin"],',
    },
  },
  {
    check: {
      file: CLAUDE_CODE,
      name: `${END_TO_END} refreshes its access token with the rotating refresh token`,
    },
    mutation: {
      file: AUTHORIZATION_SERVER,
      why: "the refresh-token grant is switched off",
      find: '    grantTypes: ["authorization_code", "refresh_token"],',
      replace: '    grantTypes: ["authorization_code"],',
    },
  },
  {
    check: { file: CLAUDE_CODE, name: `${END_TO_END} meets a revoked grant at its next call` },
    mutation: {
      file: SIGN_IN,
      why: "the resource server stops checking the grant behind each token",
      find: "    grants: true,",
      replace: "    grants: false,",
    },
  },
  // Issue 21, point 12, with the real Claude Code CLI: member scopes by default, admin by step-up.
  {
    check: {
      file: CLAUDE_CODE_STEP_UP,
      name: `${MANAGER} asks for the member scopes only when a manager signs in, and the grant carries no admin`,
    },
    mutation: {
      file: OAUTH,
      why: "the protected-resource metadata lists admin again, so Claude Code asks a manager for it",
      find: "    scopes_supported: [...MEMBER_SCOPES],",
      replace: "    scopes_supported: [...SCOPES],",
    },
  },
  {
    check: {
      file: CLAUDE_CODE_STEP_UP,
      name: `${MANAGER} meets the 403 in \`claude -p\` without re-authorizing: the model is told, nothing is erased`,
    },
    mutation: {
      file: FORGET,
      why: "a manager without admin is never stepped up, so the erasure leaves the colleague's memories",
      find: '    return others > 0 ? ["admin"] : [];',
      replace: "    return others > 0 ? [] : [];",
    },
  },
  {
    check: {
      file: CLAUDE_CODE_STEP_UP,
      name: `${MANAGER} marks North as needing authentication in a session, whose /mcp re-authentication asks for admin`,
    },
    mutation: {
      file: FORGET,
      why: "the step-up asks members, who can never hold admin, instead of managers",
      find: '    if (ctx.principal.role !== "manager" || ctx.principal.scopes.includes("admin")) return [];',
      replace: '    if (ctx.principal.role !== "member") return [];',
    },
  },
  {
    check: {
      file: CLAUDE_CODE_STEP_UP,
      name: `${MANAGER} asks for admin at the next \`claude mcp login north\`, and the retried call erases it all`,
    },
    mutation: {
      file: STEP_UP,
      why: "the step-up challenge names only the missing scope, so the re-authorized token loses the member scopes",
      find: "        return { scopes: [...principal.scopes, ...missing], id: call.id };",
      replace: "        return { scopes: missing, id: call.id };",
    },
  },
];
