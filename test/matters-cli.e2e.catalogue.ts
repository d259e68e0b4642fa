// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of matters-cli.e2e.test.ts (`north matter …`, SPEC §5a). */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/matters-cli.e2e.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "north matter creates a matter, shows it with team, screens and hold, and lists it",
    },
    mutation: {
      in: "matterShow",
      find: "screens: detail.screens.map((s) => ({ user_id: s.userId, email: s.email, reason: s.reason })),",
      replace: "screens: detail.screens.map((s) => ({ user_id: s.userId, email: s.email })),",
      why: "matter show leaves out the screens' reasons",
    },
  },
  {
    check: {
      file: SUITE,
      name: 'north matter refuses matter create ["--ref","2026/0042","--name","N"] in one line, changing nothing',
    },
    mutation: {
      file: "apps/north/src/matters.ts",
      find: 'throw translate(error, { "23505": DUPLICATE });',
      replace: "throw error;",
      why: "a duplicate reference surfaces as an internal error, not the one line saying so",
    },
  },
  {
    check: {
      file: SUITE,
      name: "north matter refuses a team or screen change for a non-member, and a hold on an unknown matter",
    },
    mutation: {
      in: "addToTeam",
      find: 'if (!(await isActiveMember(tx, params.organizationId, params.userId))) { return { ok: false, problem: "not_member" }; }',
      replace: "",
      why: "team add does not check that the user is a member",
    },
  },
  {
    check: {
      file: SUITE,
      name: "north matter import refuses a file naming a stranger, naming the email, and imports nothing",
    },
    mutation: {
      in: "matterImport",
      find: "if (unknown.length > 0) {",
      replace: "if (false as boolean) {",
      why: "an import naming a stranger goes on without saying who",
    },
  },
  {
    check: {
      file: SUITE,
      name: "north matter import imports all of it, then changes nothing on a second run",
    },
    mutation: {
      in: "updateMatter",
      find: "sql`(${matters.name}, ${matters.client}, ${matters.access}) is distinct from (${name}, ${client}::text, ${params.access})`,",
      replace: "undefined,",
      why: "an import rewrites every matter it names, so a second run reports changes",
    },
  },
  {
    check: {
      file: SUITE,
      name: "north matter import refuses a file with a bad reference or a reference twice, importing nothing",
    },
    mutation: {
      in: "readImport",
      find: "if (seen.has(key)) {",
      replace: "if (false as boolean) {",
      why: "an import naming one reference twice is not refused as such",
    },
  },
];

export const SUITES = [SUITE];
