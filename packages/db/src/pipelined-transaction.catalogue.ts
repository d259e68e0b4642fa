// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
// The acceptance-mutation catalogue's entries for pipelined-transaction.integration.test.ts
// (gathered in scripts/acceptance-mutations.ts): for each check, the product change that turns
// it red.
import type { Edit, Entry } from "../../../test/support/catalogue.ts";

const SUITE_1 = "packages/db/src/pipelined-transaction.integration.test.ts";
const SUITE_2 = "packages/db/src/pipelined-transaction-attacks.integration.test.ts";

export const SUITES = [SUITE_1, SUITE_2];

/** Decision 045's first version: a statement built once opened the transaction when it was made. */
const OPENS_WHEN_MADE: Edit = {
  file: "packages/db/src/pipelined-transaction.ts",
  in: "scoped",
  find: "          const opensAtSend = !finish && builtOnce(options);\n          if (!batch && !opensAtSend) state.open();\n",
  replace:
    "          const opensAtSend = false;\n          if (!batch) state.open(builtOnce(options) ? (args ?? []) : undefined);\n",
};
/** …and a failed work awaited the head's answers before it sent ROLLBACK. */
const ROLLBACK_AFTER_HEAD: Edit = {
  file: "packages/db/src/pipelined-transaction.ts",
  in: "beginPipelined",
  find: "      const ended = ending\n",
  replace: "      await firstFailure(head ?? [], error);\n      const ended = ending\n",
};

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction sets the tenant before the work's first statement, for every one of many concurrent transactions",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: '    const begin = send("begin", [], { ...session.beginOptions, ...batching }, true);\n',
      replace:
        '    const tenant = plan.head.map((s) => send(s.text, s.params, batching, true));\n    const begin = send("begin", [], { ...session.beginOptions, ...batching }, true);\n',
      why: "the tenant is sent before BEGIN, so it ends with its own implicit transaction",
      also: [
        {
          file: "packages/db/src/pipelined-transaction.ts",
          in: "open",
          find: "head = [begin, ...plan.head.map((s) => send(s.text, s.params, batching, true))];",
          replace: "head = [begin, ...tenant];",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction writes the tail in the same transaction as the work, after its statements",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "end",
      find: "tail: tail.map((s) => send(s.text, s.params, batching)),",
      replace: "tail: [],",
      why: "the tail (a tool call's audit row) is never sent",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction rolls the work back when the tail fails, and says why",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "    if (failure !== undefined) throw failure;\n",
      replace: "",
      why: "a failed audit insert is taken for success: COMMIT answered with ROLLBACK, or skipped in the tail's batch",
      also: [
        {
          file: "packages/db/src/pipelined-transaction.ts",
          in: "beginPipelined",
          find: "      throw failure ?? error;\n",
          replace:
            '      if (failure === undefined) throw error;\n      return { command: "COMMIT" };\n',
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction rolls back a work that throws, sends no tail, and leaves the pool usable",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: '          ? send("rollback", [], FLUSH)\n',
      replace: "          ? Promise.resolve()\n",
      why: "a failed work's connection goes back to the pool inside its aborted transaction",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction reports a failed head statement as the cause, and runs none of the work's effects",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "cause",
      find: "const cause = await firstFailure(head ?? [], error);",
      replace: "const cause = error;",
      why: "a failed tenant statement is reported as the work's 'transaction aborted'",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction keeps savepoints: a failure inside one rolls back to it and the transaction commits",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "      await run(`rollback to savepoint ${name}`);\n",
      replace: "",
      why: "a failure inside a savepoint aborts the whole transaction",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction refuses to run when Drizzle does not open the transaction at once",
    },
    mutation: {
      in: "pipelined",
      find: "  if (!taken) {",
      replace: "  if (!taken && handoff) {",
      why: "a plan nobody took is ignored: the work would run without its tenant",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "what a pipelined transaction writes to its socket sends a read (head, last statement, tail) as one write with one Sync and no BEGIN or COMMIT, before the event loop's turn ends",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "openBatch",
      find: "    if (head || plan.head.length === 0) return false;\n",
      replace: "    return false;\n",
      why: "a read goes out as an explicit transaction: BEGIN and COMMIT, and a Sync after every statement (decision 044)",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "what a pipelined transaction writes to its socket sends a transaction whose work sends nothing (the tenant and the tail) as one write with one Sync, and commits it",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "end",
      find: "    if (batched || (head === undefined && openBatch(undefined, tail))) {\n",
      replace: "    if (batched) {\n",
      why: "a refused call's audit row goes out with BEGIN and COMMIT instead of as one batch",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "what a pipelined transaction writes to its socket sends a write's first round trip (BEGIN, head, first statement) as one write, at once, and the tail with COMMIT",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "scoped",
      find: "              ...(batch ?? (finish ? lastInBegin(args ?? [], finish.tail) : FLUSH)),\n",
      replace:
        "              ...(batch ?? (finish ? lastInBegin(args ?? [], finish.tail) : {})),\n",
      why: "the work's statements wait for postgres.js's write timer before they leave",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a tail that throws while it is built leaves no transaction open for the next user of the connection",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "        const tail = plan.tail?.(result) ?? [];\n        refuseUnbuildable(tail);\n        end(tail);\n",
      replace: "",
      why: "the tail is built after the work's try: a tail that throws leaves BEGIN without ROLLBACK",
      also: [
        {
          in: "beginPipelined",
          find: "    const sent = ending as NonNullable<typeof ending>;",
          replace:
            "    if (!ending) end(plan.tail?.(result) ?? []);\n    const sent = ending as NonNullable<typeof ending>;",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a work statement that fails before it is sent fails the call, and the pool goes on",
    },
    mutation: {
      // Two lines hold here: North refuses the value (`unbuildable`) and, since BEGIN goes out
      // with the work's first statement, postgres.js's own refusal fails that statement alone.
      file: "packages/db/src/pipelined-transaction.ts",
      in: "unbuildable",
      find: "  if (args.includes(undefined)) {",
      replace: "  if (args.includes(Symbol.iterator)) {",
      why: "an undefined value reaches postgres.js, whose refusal rejects BEGIN and leaves the statement unanswered",
      also: [
        {
          file: "node_modules/postgres/src/connection.js",
          find: "      if (query !== q) {\n        sent.remove(q)\n",
          replace: "      if (false) {\n        sent.remove(q)\n",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a connection that dies between the work's statements fails the call instead of hanging it",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "        connection.onclose = onclose;\n",
      replace: "",
      why: "the transaction does not hear of its connection's close: the next statement waits forever",
      // Two lines hold here since decision 044: the transaction's own watch (`sameSession`) and
      // the patched reserve(), which refuses what is sent on a connection that closed.
      also: [
        {
          file: "node_modules/postgres/src/index.js",
          find: "      if (closedWith)\n        return q.reject(closedWith)\n",
          replace: "",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a connection that dies mid-transaction and is opened again for another tenant never runs the first call's statements",
    },
    mutation: {
      in: "sameSession",
      find: "    gone: () => closed || (backend !== undefined && backend.pid !== pid),",
      replace: "    gone: () => false,",
      why: "statements after the close go to whichever session the pool opens on the connection next",
      // Two lines hold here since decision 044: the transaction's own watch (`sameSession`) and
      // the patched reserve(), which refuses what is sent on a connection that closed.
      also: [
        {
          file: "node_modules/postgres/src/index.js",
          find: "      if (closedWith)\n        return q.reject(closedWith)\n",
          replace: "",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a pool whose transactions were refused while PostgreSQL was unreachable opens them again once it is back",
    },
    mutation: {
      file: "node_modules/postgres/src/index.js",
      find: "    queries.length && connect(c, reserving(queries.shift()))\n",
      replace: "    queries.length && connect(c, queries.shift())\n",
      why: "a reserve refused during an outage is handed the first connection to open, which is never released",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction ends with the work's last statement: its tail and COMMIT go with it, and nothing may follow",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "refusal",
      find: "if (state.ended()) return transactionEnded();",
      replace: "",
      why: "a statement after the early COMMIT runs on the connection, outside the transaction",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction rolls a failing last statement back with the work before it and the tail sent with it",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "            sent.catch(ignore);\n            finish.sent(sent);\n",
      replace: "            finish.sent(sent);\n            sent.catch(ignore);\n",
      why: "the tail and COMMIT are written before the last statement, which then runs on its own",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction refuses a last statement that is not sent at once, before anything of it runs",
    },
    mutation: {
      in: "finishWith",
      find: "if (!sent) {",
      replace: "if (false) {",
      why: "a statement sent after its first await is taken for the last, unannounced",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a connection that dies while statements wait behind one being described fails them all instead of hanging them",
    },
    mutation: {
      in: "beginPipelined",
      find: "if (session.gone()) return refused();",
      replace: "",
      why: "the transaction's ROLLBACK is written to a connection that closed under it, and waits for an answer forever",
      // Two lines hold here since decision 044: the transaction's own watch (`sameSession`) and
      // the patched reserve(), which refuses what is sent on a connection that closed.
      also: [
        {
          file: "node_modules/postgres/src/index.js",
          find: "      if (closedWith)\n        return q.reject(closedWith)\n",
          replace: "",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a query the work made but sends only after its transaction ended never runs in the next tenant's transaction",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "refusedAtSend",
      find: "      if (error) return pending.reject(error);\n",
      replace: "",
      why: "a query is checked only when it is made, and sent later in whatever transaction holds the connection",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a query the work made before its last statement and sends after it is refused, not committed outside the transaction",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "refusedAtSend",
      find: "      const error = refuse();\n",
      replace: "      const error = undefined;\n",
      why: "a query sent after COMMIT went out with the last statement runs outside the transaction",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a backend killed under a transaction, with the next statement written before the socket closes, never wedges the pool",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "    ;(query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
      replace:
        "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
      why: "a statement written between the socket's error and its close is failed by neither and waits forever, and the pool with it",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a last statement whose prepared plan a schema change invalidated fails its call, and is not run again after COMMIT",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "retryRoutines.has(errorResponse.routine) && x[5] === 73 && !query.ofBatch\n",
      replace: "retryRoutines.has(errorResponse.routine)\n",
      why: "a statement whose plan went stale is sent again alone, after its batch rolled back (or behind the COMMIT already written), and its effect is committed outside the transaction",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a statement whose prepared plan a schema change invalidated is prepared again at its connection's next call",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: ": (retryRoutines.has(errorResponse.routine) && delete statements[query.signature], errored(errorResponse))\n",
      replace: ": errored(errorResponse)\n",
      why: "the stale statement stays prepared, and every later call on the connection fails with it",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a statement postgres.js cannot build behind one in flight fails alone, and neither the call nor the pool hangs",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "      if (query !== q) {\n        sent.remove(q)\n",
      replace: "      if (false) {\n        sent.remove(q)\n",
      why: "the unbuildable statement waits in `sent` for an answer that never comes, and the call and the connection hang",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a tenant transaction sent as one batch a read that committed or failed leaves no transaction and no tenant on the connection",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "const BATCH_END = { simple: false, flush: true } as postgres.UnsafeQueryOptions;",
      replace:
        "const BATCH_END = { batch: true, simple: false, flush: true } as postgres.UnsafeQueryOptions;",
      why: "the batch's last statement carries no Sync: the implicit transaction stays open, with the tenant, for whatever the connection sends next",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a tenant transaction sent as one batch a batch whose tenant is refused runs nothing after it: neither the work's statement nor the tail",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "        query.batched && skipBatch()\n",
      replace: "",
      why: "the statements PostgreSQL skipped after the refused tenant wait for answers that never come, and the call hangs",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a tenant transaction sent as one batch a value a batch cannot carry sends its transaction with BEGIN and COMMIT: the call fails alone and the connection stays",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "batchable",
      find: "  return params.every(\n",
      replace: "  return true || params.every(\n",
      why: "an object goes in a batch untyped: postgres.js refuses it mid-batch and the connection is closed",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a tenant transaction sent as one batch many concurrent reads as batches on a small pool each read their own tenant",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "openBatch",
      find: "...(i === 0 ? session.beginOptions : {}), ...nextInBatch() }),",
      replace: "...(i === 0 ? session.beginOptions : {}), ...(nextInBatch(), BATCH_END) }),",
      why: "the tenant goes out with its own Sync, so it is committed (and gone) before the read runs",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "what a pipelined transaction writes to its socket finishes a batch whose socket reports backpressure: the statement with the Sync is not held back",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "      return (write(buffer, q.options.flush ? flushed : undefined) || batched)\n",
      replace: "      return write(buffer, q.options.flush ? flushed : undefined)\n",
      why: "backpressure marks the connection full mid-batch: the statement with the Sync waits for a ReadyForQuery that only that Sync would bring",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a tenant transaction sent as one batch a connection closed before the work's first statement never serves another tenant, nor hangs",
    },
    mutation: {
      file: "node_modules/postgres/src/index.js",
      find: "      if (closedWith)\n        return q.reject(closedWith)\n",
      replace: "",
      why: "a statement sent after the reserved connection closed runs in the session the pool opened on it for another tenant",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a tenant transaction sent as one batch a batch whose first statement cannot be built runs nothing of the rest without its tenant",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "      if (inBatch || q.options.batch) {\n",
      replace: "      if (inBatch) {\n",
      why: "the unbuildable head fails alone and the rest of the batch runs as a batch of its own, without the tenant, and commits",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a tenant transaction sent as one batch a batch that leaves a transaction open fails its call and never hands the session on",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "    if (query && query.ofBatch && !query.batchInTransaction && x[5] !== 73) {\n",
      replace: "    if (false) {\n",
      why: "a BEGIN inside a batch keeps the tenant's transaction open on the connection, for its next user",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a tenant transaction sent as one batch an empty statement in a batch is answered as itself: the answers after it go where they belong",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "    query && query.batched && batchAnswered()\n",
      replace: "",
      why: "an empty batched statement is never answered, so it takes the next statement's answer",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a statement the work sends while its failed transaction rolls back is refused, not run outside it without a tenant",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "      // outside the transaction and without its tenant.\n      over = true;\n",
      replace: "",
      why: "a branch of the work still running sends its statement behind the ROLLBACK, in autocommit, without the tenant",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on a pipelined tenant transaction a work that fails with an error that only looks like an outage gives its healthy connection back to the pool",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "    if (!session.gone()) connection.release();\n",
      replace: "    if (!session.gone() && !failed) connection.release();\n",
      why: "a failed call keeps its healthy connection: the pool shrinks by one at each, and hangs once empty",
      also: [
        {
          file: "packages/db/src/pipelined-transaction.ts",
          find: "      over = true;\n      // Ended already with the work's last statement",
          replace:
            "      over = true;\n      failed = true;\n      // Ended already with the work's last statement",
        },
        {
          file: "packages/db/src/pipelined-transaction.ts",
          find: "  let over = false;\n",
          replace: "  let over = false;\n  let failed = false;\n",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "what a pipelined transaction writes to its socket keeps a reserved connection its own when its socket drains with nothing in flight",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "    !query && !connection.reserved && onopen(connection)\n",
      replace: "    !query && onopen(connection)\n",
      why: "a reserved connection whose socket drains is handed to the pool, and another caller's query runs in its transaction",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction keeps its one connection through every failure of a batch inside BEGIN, rolled back and idle for the next tenant",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "beginPipelined",
      find: '      if (!batched && skipped(error)) await send("rollback", [], FLUSH).catch(ignore);\n',
      replace: "",
      why: "a COMMIT skipped after a failed statement of its batch leaves the failed transaction open on the connection the next tenant gets",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "a pipelined tenant transaction sends a last statement held back behind one being described, with the tail and COMMIT that end its batch",
    },
    mutation: {
      file: "node_modules/postgres/src/index.js",
      find: "        if (!q.options.batch)\n          return\n",
      replace: "        return\n",
      why: "a batched statement held back is sent alone, and the statement that ends its batch waits for an answer that never comes",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "what a pipelined transaction writes to its socket sends a save as two writes with one Sync each: BEGIN, the head and its statement built once; the tail and COMMIT",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "beginPipelined",
      find: "    const batching = first && batchable(first) && plan.head.every(carried) ? IN_TRANSACTION : {};\n",
      replace: "    const batching = {};\n",
      why: "BEGIN and the tenant are answered each before the save's statement: three ReadyForQuery where one does",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a statement built once that a failing work's branch starts while it rolls back neither hangs the call nor the pool",
    },
    mutation: {
      ...OPENS_WHEN_MADE,
      why: "BEGIN and the tenant go without their Sync when the statement is made, and the failed work waits for their answers before it sends the ROLLBACK that would carry one",
      also: [ROLLBACK_AFTER_HEAD],
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a statement built once that the work makes and never sends, before it throws, leaves nothing open",
    },
    mutation: {
      ...OPENS_WHEN_MADE,
      why: "a statement made and never sent leaves BEGIN and the tenant without their Sync, and the failed work waits for them forever, its connection with it",
      also: [ROLLBACK_AFTER_HEAD],
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a statement built once that the work sends late opens nothing before it is sent: no transaction waits without a timeout",
    },
    mutation: {
      ...OPENS_WHEN_MADE,
      why: "BEGIN and the tenant go out when the statement is made: the transaction waits, with no Sync and so no idle timeout, until the work sends it",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a statement built once awaited after a statement with an array value sends both, each as it can go",
    },
    mutation: {
      ...OPENS_WHEN_MADE,
      why: "the statement with the array value ends the batch BEGIN and the tenant began for another, and the driver closes the connection on its value",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a statement built once whose send is pending when another statement opens the transaction runs after the tenant",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      find: "    if (now) writeNow(query);\n",
      replace: "",
      why: "BEGIN and the tenant are written a microtask late, behind a statement of the work already waiting: it runs outside the transaction, without its tenant",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a batched tail behind 100 statements in flight is sent with its COMMIT: neither the call nor the pool hangs",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "        && (sent.length < max_pipeline || batched)\n",
      replace: "        && sent.length < max_pipeline\n",
      why: "a batched statement at the pipeline's length marks the connection full, and the COMMIT that carries its Sync waits for an answer only that Sync brings",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a last statement sent behind 100 statements in flight goes with its tail and COMMIT",
    },
    mutation: {
      file: "node_modules/postgres/src/connection.js",
      find: "        && (sent.length < max_pipeline || batched)\n",
      replace: "        && sent.length < max_pipeline\n",
      why: "the last statement, batched at the pipeline's length, holds back its tail and COMMIT forever",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a statement built once that the work cancels before it is sent is refused: neither the call nor the pool hangs",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "refusedAtSend",
      find: "  pending.cancel = refuseCancel;\n",
      replace: "",
      why: "postgres.js skips the cancelled statement at its send, and BEGIN and the tenant batched before it wait forever for its Sync",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "attacks on batches inside BEGIN a statement that the work cancels after it was written is refused: the call keeps nothing and the next tenant meets none of its answers",
    },
    mutation: {
      file: "packages/db/src/pipelined-transaction.ts",
      in: "refusedAtSend",
      find: "  pending.cancel = refuseCancel;\n",
      replace: "",
      why: "postgres.js drops the written statement from its queue while PostgreSQL answers it: every later answer goes to the statement before, COMMIT is taken for failed while the tail commits",
    },
  },
];
