// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of limiter-and-audit.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/limiter-and-audit.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "14. the Redis limiter with one write per window refuses the second save with a receipt, writes no row, audits it, and lets it through after the window",
    },
    mutation: {
      in: "runAudited",
      find: 'await auditOnly(audit("rate_limited", target)).catch(',
      replace: "await Promise.resolve().catch(",
      why: "skip the audit row of a rate-limited call",
    },
  },
  {
    check: {
      file: SUITE,
      name: "16. the audit sentinel keeps question, answer and id text out of audit rows, logs and Redis keys across outcomes",
    },
    mutation: {
      file: "apps/mcp-server/src/tool-runner.ts",
      find: '        latencyMs: Math.round(ctx.now() - started),\n      },\n      "tool call",',
      replace:
        '        latencyMs: Math.round(ctx.now() - started),\n        input,\n      },\n      "tool call",',
      why: "log the tool input in the runner",
    },
  },
  {
    check: {
      file: SUITE,
      name: "every call that reaches a handler is audited exactly once writes one row per read and per save, with the request id",
    },
    mutation: {
      in: "runAudited",
      find: "(result) => audit( result.audit.outcome,",
      replace: 'tool.kind !== "write" ? undefined : (result) => audit( result.audit.outcome,',
      why: "audit writes only, not reads",
      also: [
        {
          in: "runAudited",
          find: "return finishWith(tx, [auditStatement(event)], statement);",
          replace: "return finishWith(tx, [], statement);",
        },
      ],
    },
  },
];
