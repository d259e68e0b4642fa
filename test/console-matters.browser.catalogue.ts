// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of console-matters.browser.test.ts (SPEC §5a's console). */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/console-matters.browser.test.ts";
const PAGES = "the console's matters";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: `${PAGES} lists the matters with access, team size, screens, hold and the memories this manager may see`,
    },
    mutation: {
      in: "listMatters",
      find: 'where m.matter_id = "matters"."id" and m.forgotten_at is null',
      replace: 'where m.matter_id = "id" and m.forgotten_at is null',
      why: "the memory count compares each memory's matter with its own id",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${PAGES} shows a matter's team, screens with reasons, hold and its memories to a manager on the team`,
    },
    mutation: {
      in: "matterPage",
      find: '<dd>${detail.hold ? html`${hold(detail.hold)}: ${detail.hold.reason}` : "None"}</dd>',
      replace: '<dd>${detail.hold ? hold(detail.hold) : "None"}</dd>',
      why: "the matter's page leaves out the hold's reason",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${PAGES} shows a screened manager the matter, and none of its memories`,
    },
    mutation: {
      in: "memorySection",
      find: "if (view.screened) {",
      replace: "if (false as boolean) {",
      why: "a screened manager is not told why the matter's memories are not shown",
    },
  },
  {
    check: { file: SUITE, name: `${PAGES} lists a member's matters and screens on their page` },
    mutation: {
      file: "apps/web/src/pages/member.ts",
      find: "${memberMattersSection(view.matters)}",
      replace: "",
      why: "a member's page leaves out their matters and screens",
    },
  },
];

export const SUITES = [SUITE];
