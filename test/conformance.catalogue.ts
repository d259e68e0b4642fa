// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of conformance.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/conformance.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "MCP conformance passes every server scenario of 2026-07-28 that applies to North",
    },
    mutation: {
      in: "transportGuard",
      find: "    if (!host || !hosts.has(hostname(host))) {",
      replace: "    if (!host) {",
      why: "any Host header accepted: DNS rebinding gets through on the 2026 path too",
    },
  },
  {
    check: {
      file: SUITE,
      name: "MCP conformance passes every server scenario of 2025-11-25 that applies to North",
    },
    mutation: {
      in: "transportGuard",
      find: "    if (!host || !hosts.has(hostname(host))) {",
      replace: "    if (!host) {",
      why: "any Host header accepted: DNS rebinding gets through",
    },
  },
];
