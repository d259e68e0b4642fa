/**
 * The acceptance-mutation catalogue, gathered: each suite keeps its own beside it
 * (`<suite>.catalogue.ts`, or a suite folder's `catalogue/`), as plain data in the shape of
 * test/support/catalogue.ts. `bun run test:acceptance-mutations` (scripts/try-mutations.ts) tries
 * every entry and writes the per-check table of docs/acceptance.md from the results. A suite
 * listed here must have an entry for every check (or a reason in its NO_MUTATION).
 */
import * as mattersStore from "../packages/db/src/matters.integration.catalogue.ts";
import * as pipelined from "../packages/db/src/pipelined-transaction.catalogue.ts";
import * as provision from "../packages/db/src/provision.integration.catalogue.ts";
import * as rls from "../packages/db/src/rls.integration.catalogue.ts";
import * as workingProfileStore from "../packages/db/src/working-profile.integration.catalogue.ts";
import * as conformance from "../test/conformance.catalogue.ts";
import * as conformanceAuthorization from "../test/conformance-authorization.catalogue.ts";
import * as consoleMatters from "../test/console-matters.browser.catalogue.ts";
import * as contract from "../test/contract.catalogue.ts";
import * as hosts from "../test/hosts/catalogue/index.ts";
import * as limiter from "../test/limiter-and-audit.catalogue.ts";
import * as matters from "../test/matters.acceptance.catalogue.ts";
import * as mattersCli from "../test/matters-cli.e2e.catalogue.ts";
import * as memory from "../test/memory.acceptance.catalogue.ts";
import * as idempotence from "../test/memory-idempotence.catalogue.ts";
import * as boundedRecall from "../test/memory-recall-bounded.catalogue.ts";
import * as revisions from "../test/protocol-revisions.catalogue.ts";
import * as denialOfService from "../test/security/catalogue/denial-of-service.ts";
import * as rememberedGrants from "../test/security/catalogue/remembered-grants.ts";
import * as rememberedTokens from "../test/security/catalogue/remembered-tokens.ts";
import * as signIn from "../test/sign-in/catalogue/index.ts";
import type { Entry, NoMutation } from "../test/support/catalogue.ts";
import * as transport from "../test/transport.catalogue.ts";
import * as workingProfile from "../test/working-profile.acceptance.catalogue.ts";

export type { Check, Edit, Entry, Mutation, NoMutation } from "../test/support/catalogue.ts";

/** One suite's catalogue: the suites it covers and an entry per check. */
interface Part {
  SUITES: readonly string[];
  MUTATIONS: readonly Entry[];
  NO_MUTATION?: readonly NoMutation[];
}

/** A catalogue beside one suite file. */
const single = (part: { SUITE: string; MUTATIONS: readonly Entry[] }): Part => ({
  SUITES: [part.SUITE],
  MUTATIONS: part.MUTATIONS,
});

const PARTS: readonly Part[] = [
  single(workingProfile),
  single(memory),
  single(contract),
  single(limiter),
  single(transport),
  single(revisions),
  single(conformance),
  single(conformanceAuthorization),
  single(workingProfileStore),
  single(rls),
  single(provision),
  signIn,
  hosts,
  pipelined,
  rememberedTokens,
  rememberedGrants,
  mattersStore,
  matters,
  mattersCli,
  consoleMatters,
  // Entries for some of its checks only: the suite's older ones are memory.acceptance's.
  { SUITES: [], MUTATIONS: boundedRecall.MUTATIONS },
  { SUITES: [], MUTATIONS: idempotence.MUTATIONS },
  { SUITES: [], MUTATIONS: denialOfService.MUTATIONS },
];

/** Every suite whose checks must each have an entry (or a reason in {@link NO_MUTATION}). */
export const SUITES: readonly string[] = PARTS.flatMap((part) => part.SUITES);

export const MUTATIONS: readonly Entry[] = PARTS.flatMap((part) => part.MUTATIONS);

/** Checks no sensible product mutation turns red. Each one points at a weak test. */
export const NO_MUTATION: readonly NoMutation[] = PARTS.flatMap((part) => part.NO_MUTATION ?? []);
