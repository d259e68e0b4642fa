/**
 * The acceptance-mutation catalogue of memory-idempotence.test.ts: for each check listed, the
 * careless change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts
 * tries them). Its older checks predate the catalogue and are covered by memory.acceptance's.
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/memory-idempotence.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "the idempotence look-up reads the identity's index, not the author's day of memories",
    },
    mutation: {
      file: "packages/db/src/memories/remember.ts",
      find: "sql`md5(",
      replace: "sql`true or md5(",
      why: "the look-up no longer narrows by the identity's hash, so it matches the body alone, which no index holds: every remember reads the author's day of memories (a sequential scan of the table)",
    },
  },
];
