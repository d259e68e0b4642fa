// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** Point 8 of issue 21: every JSON-RPC message is metered, not only tools/call. */
import type { Entry } from "../../support/catalogue.ts";

export const SUITE = "test/security/protocol-metering.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget refuses a batch of tools/list beyond the budget with 429, each id answered, audited, nothing run",
    },
    mutation: {
      in: "meterPost",
      find: "Math.max(1, messages.length)",
      replace: "1",
      why: "charge a batch one point, whatever the number of its messages",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget counts single tools/list requests one by one, and answers the one over with its id",
    },
    mutation: {
      in: "buildMcpRoutes",
      find: "const refused = await meterPost(body, principal, requestId, { ...options, prove: proven });",
      replace:
        "const refused = Array.isArray(body)\n      ? await meterPost(body, principal, requestId, { ...options, prove: proven })\n      : undefined;",
      why: "meter batches only, as if a single message were cheap enough",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget counts ping, prompts/list and prompts/get in the same budget",
    },
    mutation: {
      in: "meterPost",
      find: "Math.max(1, messages.length)",
      replace: 'messages.filter((m) => String(m?.method).startsWith("tools/")).length',
      why: "charge tools/* methods only; ping and prompts/* go free",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget counts a body that does not parse as one message",
    },
    mutation: {
      file: "apps/mcp-server/src/routes/mcp.ts",
      find: "const refused = await meterPost(null, await proven(), requestId, options);\n      if (refused) return refused;\n",
      replace: "",
      why: "answer an unparseable body 400 without charging it",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget counts GET /manifest, which carries the tool list, in the same budget",
    },
    mutation: {
      file: "apps/mcp-server/src/routes/manifest.ts",
      find: "    if (refused) return refused;\n    const embedder",
      replace: "    const embedder",
      why: "serve the manifest unmetered: it is not JSON-RPC",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget charges a tools/call one point too, so calls to a tool that does not exist are metered",
    },
    mutation: {
      in: "meterPost",
      find: "Math.max(1, messages.length)",
      replace: 'Math.max(1, messages.filter((m) => m?.method !== "tools/call").length)',
      why: "leave tools/call to its read/write budget, which an unknown tool never reaches",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget leaves another member and another organisation their whole budget",
    },
    mutation: {
      in: "createRateLimiter",
      find: "await limiters[bucket].consume(`${principal.organizationId}:${principal.userId}`, points);",
      replace: "await limiters[bucket].consume(`${principal.organizationId}`, points);",
      why: "key the budgets by organisation only, so one member exhausts a colleague's",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget keeps tool-call budgets as they were: each call of a batch charged, tools/list apart",
    },
    mutation: {
      file: "apps/mcp-server/src/tool-runner.ts",
      in: "decision",
      find: "await ctx.limiter.consume(principal, tool.kind);",
      replace: 'await ctx.limiter.consume(principal, "protocol");',
      why: "charge tool calls to the protocol bucket instead of their read/write budget",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every JSON-RPC message counts against a per-principal protocol budget refuses a batch of more than 100 messages with 400 at once, uncharged, running none",
    },
    mutation: {
      in: "meterPost",
      find: "if (messages.length > MAX_BATCH_SIZE) {",
      replace: "if (false) {",
      why: "drop the batch cap ahead of the meter (the SDK's own comes after it)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the protocol budget in Redis holds across two replicas, and its keys name only ids, never a body",
    },
    mutation: {
      in: "createRateLimiter",
      find: 'protocol: onRedis("protocol")',
      replace: 'protocol: memory("protocol")',
      why: "keep the protocol bucket in process even with Redis: each replica counts alone",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a stdio session is metered the same way: the message over the budget is refused with NORTH_RATE_LIMITED",
    },
    mutation: {
      file: "apps/north/src/serve.ts",
      in: "connection",
      find: "    admit: () => meterMessage(principal, meter),",
      replace: "    admit: async () => undefined,",
      why: "meter HTTP only; stdio takes another path",
    },
  },
];

export const SUITES = [SUITE];
