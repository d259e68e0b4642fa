// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of test/sign-in/metadata-unreachable.test.ts, test/sign-in/claude-code.test.ts, test/sign-in/claude-code-step-up.test.ts. */
import type { Entry } from "../../support/catalogue.ts";

const SUITE_1 = "test/sign-in/metadata-unreachable.test.ts";
const SUITE_2 = "test/sign-in/claude-code.test.ts";
const SUITE_3 = "test/sign-in/claude-code-step-up.test.ts";

export const SUITES = [SUITE_1, SUITE_2, SUITE_3];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE_1,
      name: "a metadata document that cannot be read ends on North's page saying so, with a log line naming network",
    },
    mutation: {
      in: "FAILURE_CLASS",
      find: '  network: "network",',
      replace: '  network: "status",',
      why: "a dropped connection is logged as an error status",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a metadata document that cannot be read turns the library's other errors into a page, and keeps an error redirect to the client",
    },
    mutation: {
      in: "libraryError",
      find: "    if (target.origin !== errorPage.origin || target.pathname !== errorPage.pathname) return null;",
      replace: "    return null;",
      why: "a redirect to the library's own error URL (which North does not serve) passes through",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "Claude Code's pinned document (decision 032) stands in when claude.ai cannot be read (challenge)",
    },
    mutation: {
      in: "STANDS_IN_FOR",
      find: 'const STANDS_IN_FOR = new Set<MetadataFailureClass>(["network", "timeout", "status", "challenge"]);',
      replace:
        'const STANDS_IN_FOR = new Set<MetadataFailureClass>(["network", "timeout", "status"]);',
      why: "the pinned copy does not stand in for a challenge page",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "Claude Code's pinned document (decision 032) never stands in for a withdrawn document",
    },
    mutation: {
      in: "GONE",
      find: "const GONE = new Set([404, 410]);",
      replace: "const GONE = new Set([410]);",
      why: "a 404 (the host withdrew the client id) counts as unreachable",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "Claude Code signs in to North end to end asks with its metadata document id, a loopback port and the metadata's scopes",
    },
    mutation: {
      in: "trimmedMetadata",
      find: "  document.scopes_supported = [...SCOPES];",
      replace:
        "  document.scopes_supported = [...SCOPES]; document.client_id_metadata_document_supported = false;",
      why: "the authorization-server metadata stops offering metadata documents (Claude Code falls back to DCR)",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "Claude Code signs in to North end to end signs in with the live document, its port accepted against portless URIs, and stores tokens",
    },
    mutation: {
      in: "as",
      find: "withPinnedClientMetadata(options.fetchClientMetadata ?? createMetadataFetch()),",
      replace: "withPinnedClientMetadata(createMetadataFetch()),",
      why: "the configured transport is dropped for the default one (the pinned copy hides it)",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "Claude Code signs in to North end to end shows North connected in `claude mcp list`",
    },
    mutation: {
      in: "jwtChecks",
      find: '  typ: "at+jwt",',
      replace: '  typ: "JWT",',
      why: "the resource server expects another token type than the one North issues",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "Claude Code signs in to North end to end calls a North tool through Claude Code",
    },
    mutation: {
      in: "workingProfileCapability",
      find: '  scopes: ["profile:write"],',
      replace: '  scopes: ["admin"],',
      why: "the working-profile tools need admin, so a member's host is never offered them",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "Claude Code signs in to North end to end refreshes its access token with the rotating refresh token",
    },
    mutation: {
      in: "mcpProvider",
      find: '    grantTypes: ["authorization_code", "refresh_token"],',
      replace: '    grantTypes: ["authorization_code"],',
      why: "the refresh-token grant is switched off",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "Claude Code signs in to North end to end meets a revoked grant at its next call",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/index.ts",
      in: "oauth",
      find: "    grants: true,",
      replace: "    grants: false,",
      why: "the resource server stops checking the grant behind each token",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "Claude Code: a manager gets the member scopes and steps up to admin asks for the member scopes only when a manager signs in, and the grant carries no admin",
    },
    mutation: {
      in: "protectedResourceMetadata",
      find: "    scopes_supported: [...MEMBER_SCOPES],",
      replace: "    scopes_supported: [...SCOPES],",
      why: "the protected-resource metadata lists admin again, so Claude Code asks a manager for it",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "Claude Code: a manager gets the member scopes and steps up to admin meets the 403 in `claude -p` without re-authorizing: the model is told, nothing is erased",
    },
    mutation: {
      in: "forgetTool",
      find: '    return others > 0 ? ["admin"] : [];',
      replace: "    return others > 0 ? [] : [];",
      why: "a manager without admin is never stepped up, so the erasure leaves the colleague's memories",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "Claude Code: a manager gets the member scopes and steps up to admin marks North as needing authentication in a session, whose /mcp re-authentication asks for admin",
    },
    mutation: {
      in: "forgetTool",
      find: '    if (ctx.principal.role !== "manager" || ctx.principal.scopes.includes("admin")) return [];',
      replace: '    if (ctx.principal.role !== "member") return [];',
      why: "the step-up asks members, who can never hold admin, instead of managers",
    },
  },
  {
    check: {
      file: SUITE_3,
      name: "Claude Code: a manager gets the member scopes and steps up to admin asks for admin at the next `claude mcp login north`, and the retried call erases it all",
    },
    mutation: {
      in: "stepUpScopes",
      find: "        return { scopes: [...principal.scopes, ...missing], id: call.id };",
      replace: "        return { scopes: missing, id: call.id };",
      why: "the step-up challenge names only the missing scope, so the re-authorized token loses the member scopes",
    },
  },
];
