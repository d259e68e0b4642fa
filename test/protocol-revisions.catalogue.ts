// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of protocol-revisions.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/protocol-revisions.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision gives the v1 client, the v2 client pinned to 2026-07-28 and the v2 client in auto mode the same tools, prompts, instructions and receipts",
    },
    mutation: {
      in: "isLegacy",
      find: '  return route.kind === "legacy";',
      replace: '  return route.kind !== "reject";',
      why: "serve every request on the 2025 transport, 2026-07-28 ones included",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision answers server/discover with 2026-07-28, the instructions and a private caching hint",
    },
    mutation: {
      file: "apps/mcp-server/src/server.ts",
      find: '      "server/discover": LIST_CACHE_HINT,\n',
      replace: "",
      why: "give server/discover no lifetime (the SDK's default, ttlMs 0)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision marks tools/list and prompts/list private with a lifetime on 2026-07-28, and not on 2025",
    },
    mutation: {
      file: "apps/mcp-server/src/server.ts",
      find: '      "tools/list": LIST_CACHE_HINT,\n',
      replace: "",
      why: "give tools/list no lifetime (the SDK's default, ttlMs 0)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision lists tools in the same order every time",
    },
    mutation: {
      in: "createMcpServer",
      find: "    return { tools: capabilities.flatMap((c) => c.tools).map(describeTool) };",
      replace:
        "    return { tools: capabilities.flatMap((c) => c.tools).map(describeTool).sort(() => Math.random() - 0.5) };",
      why: "list tools in a different order on each call",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision refuses an unsupported protocol version with the revision's error naming the supported versions, never a 500",
    },
    mutation: {
      in: "isLegacy",
      find: '  return route.kind === "legacy";',
      replace: '  return route.kind !== "reject";',
      why: "serve every request on the 2025 transport, 2026-07-28 ones included",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision refuses a malformed protocol version on a 2025 request with 400 naming the supported versions",
    },
    mutation: {
      in: "claimsModernRevision",
      find: "  if (header !== null && /^\\d{4}-\\d\\d-\\d\\d$/.test(header) && header >= FIRST_MODERN_REVISION) {",
      replace: "  if (header !== null) {",
      why: "take any version header, even a malformed one, as a 2026-07-28 claim",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision answers initialize, a method 2026-07-28 removed, with 404 and -32601 when it carries the envelope",
    },
    mutation: {
      file: "apps/mcp-server/src/server.ts",
      find: "        isJSONRPCRequest(message) &&\n        !envelopesModernRevision(message)\n",
      replace: "        isJSONRPCRequest(message)\n",
      why: "check every initialize's params as a 2025 one, enveloped or not",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision refuses an Mcp-Method or Mcp-Name header that disagrees with the body with 400 and -32020",
    },
    mutation: {
      in: "isLegacy",
      find: '  return route.kind === "legacy";',
      replace: '  return route.kind !== "modern";',
      why: "send what the SDK refuses to the 2025 transport, which reads no Mcp-* header",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision answers a 2026-07-28 call whose token cannot be checked with NORTH_UNAVAILABLE, as a 2025 one",
    },
    mutation: {
      in: "unavailableResponse",
      find: '      ? { ...refusal, resultType: "complete" }',
      replace: "      ? refusal",
      why: "answer the refusal without the resultType 2026-07-28 requires",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision lets a browser client on an allowed origin send the 2026-07-28 headers",
    },
    mutation: {
      file: "apps/mcp-server/src/app.ts",
      find: '      "Mcp-Method",\n',
      replace: "",
      why: "leave Mcp-Method out of the headers CORS allows",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one North for every protocol revision negotiates 2025-06-18 and 2025-11-25 through initialize and lists the same tools at each",
    },
    mutation: {
      file: "apps/mcp-server/src/server.ts",
      find: "    jsonSchemaValidator: sharedValidator,\n    cacheHints: {",
      replace:
        '    jsonSchemaValidator: sharedValidator,\n    supportedProtocolVersions: ["2026-07-28", "2025-11-25"],\n    cacheHints: {',
      why: "drop 2025-06-18 from the revisions North negotiates",
    },
  },
];
