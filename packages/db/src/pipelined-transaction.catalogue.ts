// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
// The acceptance-mutation catalogue's entries for pipelined-transaction.integration.test.ts
// (gathered in scripts/acceptance-mutations.ts): for each check, the product change that turns
// it red.
import type { Entry } from "../../../scripts/acceptance-mutations.ts";

const SUITE = "packages/db/src/pipelined-transaction.integration.test.ts";
const FILE = "packages/db/src/pipelined-transaction.ts";
const check = (title: string) => ({ file: SUITE, name: `a pipelined tenant transaction ${title}` });

export const PIPELINE_SUITES = [SUITE];

export const PIPELINE_MUTATIONS: readonly Entry[] = [
  {
    check: check(
      "sets the tenant before the work's first statement, for every one of many concurrent transactions",
    ),
    mutation: {
      file: FILE,
      find: 'const head = [send("begin"), ...plan.head.map(statement)];',
      replace: 'const head = [...plan.head.map(statement), send("begin")];',
      why: "the tenant is sent before BEGIN, so it ends with its own implicit transaction",
    },
  },
  {
    check: check("writes the tail in the same transaction as the work, after its statements"),
    mutation: {
      file: FILE,
      find: "const tail = (plan.tail?.(result) ?? []).map(statement);",
      replace: "const tail: Promise<unknown>[] = [];",
      why: "the tail (a tool call's audit row) is never sent",
    },
  },
  {
    check: check("rolls the work back when the tail fails, and says why"),
    mutation: {
      file: FILE,
      find: "    if (failure !== undefined) throw failure;\n",
      replace: "",
      why: "a COMMIT answered with ROLLBACK after a failed audit insert is taken for success",
    },
  },
  {
    check: check("rolls back a work that throws, sends no tail, and leaves the pool usable"),
    mutation: {
      file: FILE,
      find: '      await send("rollback").catch(ignore);\n',
      replace: "",
      why: "a failed work's connection goes back to the pool inside its aborted transaction",
    },
  },
  {
    check: check(
      "reports a failed head statement as the cause, and runs none of the work's effects",
    ),
    mutation: {
      file: FILE,
      find: "const cause = await firstFailure(head, error);",
      replace: "const cause = error;",
      why: "a failed tenant statement is reported as the work's 'transaction aborted'",
    },
  },
  {
    check: check(
      "keeps savepoints: a failure inside one rolls back to it and the transaction commits",
    ),
    mutation: {
      file: FILE,
      find: "      await connection.unsafe(`rollback to savepoint ${name}`);\n",
      replace: "",
      why: "a failure inside a savepoint aborts the whole transaction",
    },
  },
  {
    check: check("refuses to run when Drizzle does not open the transaction at once"),
    mutation: {
      file: FILE,
      find: "  if (!taken) {",
      replace: "  if (!taken && handoff) {",
      why: "a plan nobody took is ignored: the work would run without its tenant",
    },
  },
];
