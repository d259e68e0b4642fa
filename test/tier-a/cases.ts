/**
 * The working-profile plan's conversational (Tier A) cases (issue 22, point 7; SPEC §4): what
 * the lawyer types, turn by turn; the observable contract (North's calls, the receipts, the rows,
 * the assistant's words where the contract is about words); and the turns a good model would
 * take, which the scripted stand-in plays in `bun run test`. A real model is never held to the
 * script, only to the checks (those marked `scriptedOnly` prove North's side of a path a real
 * model may avoid, and are skipped for it).
 */
import { QUESTION_BANK } from "@north/agent-runtime";
import {
  asked,
  askSuggested,
  COMPLETION,
  code,
  DISCLOSED,
  disclosure,
  entries,
  list,
  normalized,
  outcome,
  READ,
  readAll,
  readNext,
  reads,
  readsNext,
  SAVE,
  saidBeforeFirstSave,
  saidIn,
  save,
  saveAsked,
  saves,
  say,
  sleep,
  startOnboarding,
  suggestions,
  UNCERTAIN,
  unless,
} from "./checks.ts";
import type { CaseRun, Check, Row, TierACase } from "./harness.ts";

const ONBOARD = "/mcp__north__onboard";
const bank = (id: string) => QUESTION_BANK.find((q) => q.id === id)?.wording.en ?? id;
const rowsText = (rows: Row[]) =>
  rows.map((r) => `${r.question_id} v${r.version} ${JSON.stringify(r.answer)}`).join("; ") ||
  "no rows";

/** The seeded rows are still there, unchanged, and `added` new rows sit beside them. */
const seededKept = (run: CaseRun, added: number) =>
  unless(
    run.rows.length === run.seeded.length + added &&
      run.seeded.every((s) =>
        run.rows.some(
          (r) =>
            r.question_id === s.question_id && r.version === s.version && r.answer === s.answer,
        ),
      ),
    () => `seeded ${rowsText(run.seeded)}; now ${rowsText(run.rows)}`,
  );

/** Every save of `turn` was created, and one of them carries an answer matching `answer`. */
const createdIn = (run: CaseRun, turn: number, answer: RegExp) => {
  const made = saves(run, turn);
  return unless(
    made.length > 0 &&
      made.every((c) => outcome(c) === "created") &&
      made.some((c) => answer.test(String(c.input.answer))),
    () => `saves in turn ${turn + 1}: ${list(made)}`,
  );
};

const noSave = (turn: number): Check => ({
  says: `saves nothing in turn ${turn + 1}`,
  miss: (run) => unless(saves(run, turn).length === 0, () => list(saves(run, turn))),
});

const readFirst = (says: string): Check => ({
  says,
  miss: (run) => unless(reads(run, 0).length > 0, () => `calls in turn 1: ${list(run.calls)}`),
});

const firstOnboarding: TierACase = {
  id: "first-onboarding",
  title: "First onboarding: the prompt, one question, the answer saved, a stop",
  turns: [
    { says: ONBOARD, model: [startOnboarding, askSuggested(0, "First question:")] },
    {
      says: "Mostly M&A and private equity, with some employment work on the side.",
      model: saveAsked(
        "Mostly M&A and private equity, with some employment work on the side.",
        (ctx) => [say(`Saved. Next: ${suggestions(ctx)[1]?.question ?? ""}`)],
      ),
    },
    {
      says: "Let's stop here for today, thanks.",
      model: [() => [say("Of course. We can continue another time.")]],
    },
  ],
  checks: [
    {
      says: "reads the profile with view next before asking",
      miss: (run) => unless(readsNext(run, 0).length > 0, () => `turn 1 calls: ${list(run.calls)}`),
    },
    noSave(0),
    {
      says: "saves the answer right after it, as a new entry",
      miss: (run) => createdIn(run, 1, /M&A|private equity/i),
    },
    {
      says: "saves the question with the wording actually asked",
      miss: (run) => {
        const question = run.rows[0]?.question_text ?? "";
        return unless(
          question !== "" && asked(saidIn(run, 0), question),
          () => `saved ${JSON.stringify(question)}; asked: ${saidIn(run, 0).slice(0, 300)}`,
        );
      },
    },
    noSave(2),
    {
      says: "ends with one entry holding the lawyer's answer",
      miss: (run) =>
        unless(run.rows.length === 1 && /private equity/i.test(run.rows[0]?.answer ?? ""), () =>
          rowsText(run.rows),
        ),
    },
  ],
};

const PRACTICE = { question_id: "practice-areas", question: bank("practice-areas") };
const COURTS = { question_id: "jurisdictions-courts", question: bank("jurisdictions-courts") };

const adaptedQuestions: TierACase = {
  id: "adapted-questions",
  title: "Adapted questions: onboarding again skips what the profile already answers",
  seed: [
    { ...PRACTICE, answer: "Employment litigation, mostly for employers." },
    { ...COURTS, answer: "The Paris labour courts and the Paris Court of Appeal." },
  ],
  turns: [
    {
      says: ONBOARD,
      model: [startOnboarding, askSuggested(0, "You work in employment litigation in Paris.")],
    },
    {
      says: "I'm a senior associate; I work with one partner and two juniors.",
      model: saveAsked("I'm a senior associate; I work with one partner and two juniors."),
    },
  ],
  checks: [
    readFirst("reads what is already known before asking"),
    {
      says: "North suggests only bank questions not answered yet",
      miss: (run) => {
        const offered = readsNext(run).flatMap(
          (c) => (c.result?.json?.suggested_questions ?? []) as { question_id: string }[],
        );
        const again = offered.filter((s) =>
          run.seeded.some((r) => r.question_id === s.question_id),
        );
        return unless(again.length === 0, () => `suggested again: ${JSON.stringify(again)}`);
      },
    },
    {
      says: "does not ask again what the profile already answers",
      miss: (run) => {
        const said = saidIn(run, 0);
        const repeated = [PRACTICE, COURTS].filter(
          (q) =>
            asked(said, q.question) ||
            saves(run).some(
              (c) =>
                c.input.question_id === q.question_id ||
                asked(String(c.input.question), q.question),
            ),
        );
        return unless(
          repeated.length === 0,
          () => `asked again: ${repeated.map((q) => q.question_id)}`,
        );
      },
    },
    {
      says: "saves the new answer as a new entry beside the earlier ones",
      miss: (run) => createdIn(run, 1, /senior associate/i) ?? seededKept(run, 1),
    },
  ],
};

const SEEDED_CUSTOM = [
  {
    question_id: "practice-areas",
    question: "What kind of law do you practise, day to day?",
    answer: "Commercial leases and property finance.",
  },
  {
    question: "How should I format the memos you ask me for?",
    answer: "Two pages at most, with headings and no footnotes.",
  },
];

const requestedContinuation: TierACase = {
  id: "requested-continuation",
  title: "Requested continuation: the lawyer asks to talk about how they work",
  seed: SEEDED_CUSTOM,
  turns: [
    {
      says: "Can we talk a bit more about how I work? Ask me about the citation conventions I follow.",
      model: [
        () => [readNext()],
        (ctx) => {
          const found = suggestions(ctx).find((s) => s.question_id === "citation-conventions");
          ctx.memo.q = found?.question ?? "Which citation conventions do you follow?";
          ctx.memo.qid = found?.question_id ?? "";
          return [say(`${disclosure(ctx)} ${ctx.memo.q}`)];
        },
      ],
    },
    {
      says: "Bluebook for US matters, OSCOLA for English ones.",
      model: saveAsked("Bluebook for US matters, OSCOLA for English ones."),
    },
  ],
  checks: [
    readFirst("reads the profile before asking"),
    {
      says: "North shows the saved entries with the wording they were saved with",
      miss: (run) => {
        const read = reads(run, 0)
          .map((c) => c.result?.text ?? "")
          .join("\n");
        const missing = SEEDED_CUSTOM.filter(
          (s) => !read.includes(s.question) || !read.includes(s.answer),
        );
        return unless(missing.length === 0, () => `not shown: ${missing.map((s) => s.question)}`);
      },
    },
    noSave(0),
    {
      says: "saves the answer as a new entry beside the earlier ones",
      miss: (run) => createdIn(run, 1, /OSCOLA/) ?? seededKept(run, 1),
    },
  ],
};

const FOLLOW_UP =
  "When you write to clients, do you prefer a warm tone or a strictly formal one, and how do you sign off?";

const proactiveFollowUp: TierACase = {
  id: "proactive-follow-up",
  title: "Proactive follow-up: one question about how the lawyer works, after the task",
  turns: [
    {
      says: "Draft a two-sentence email to my client Ms Laurent reminding her that the signed lease must reach us by next Friday.",
      model: [
        () => [readNext()],
        (ctx) => {
          ctx.memo.q = FOLLOW_UP;
          return [
            say(
              `Dear Ms Laurent, a reminder that we need the signed lease by next Friday. Please let me know if anything stands in the way.\n\n${disclosure(ctx)} One question so I can do this better next time: ${FOLLOW_UP}`,
            ),
          ];
        },
      ],
    },
    {
      says: "Warm but brief. I sign with my first name only.",
      model: saveAsked("Warm but brief. I sign with my first name only."),
    },
  ],
  checks: [
    {
      says: "does the work first, then asks one question about how the lawyer works",
      miss: (run) => {
        const said = saidIn(run, 0);
        return unless(
          /Friday/i.test(said) && said.lastIndexOf("?") > said.search(/Friday/i),
          () => `turn 1 said: ${said.slice(0, 400)}`,
        );
      },
    },
    noSave(0),
    {
      says: "saves the follow-up answer right after it",
      miss: (run) =>
        createdIn(run, 1, /first name/i) ?? unless(run.rows.length === 1, () => rowsText(run.rows)),
    },
  ],
};

const unrelatedCustom: TierACase = {
  id: "unrelated-custom-question",
  title: "An unrelated custom question: saved in the model's own wording, under an auto id",
  turns: [
    {
      says: "Something about how I work, for my profile: I dictate my drafts on my phone, so expect typos and fix them silently.",
      model: [
        (ctx) => [
          say(`${disclosure(ctx)} I'll note how you draft.`),
          save({
            question: "How do you produce your drafts, and what should I do about typos?",
            answer: "I dictate my drafts on my phone, so expect typos and fix them silently.",
          }),
        ],
        () => [say("Saved to your working profile.")],
      ],
    },
  ],
  checks: [
    {
      says: "saves it as one new entry",
      miss: (run) => createdIn(run, 0, /dictat/i),
    },
    {
      says: "keeps the custom question as asked, under an auto: id, not a bank question",
      miss: (run) => {
        const [row] = run.rows;
        const isBank = QUESTION_BANK.some(
          (q) =>
            q.id === row?.question_id ||
            normalized(q.wording.en) === normalized(row?.question_text ?? ""),
        );
        return unless(
          run.rows.length === 1 &&
            !!row?.question_id.startsWith("auto:") &&
            !!row.question_text &&
            !isBank,
          () => rowsText(run.rows),
        );
      },
    },
    {
      says: "saves the lawyer's words, not an invention",
      miss: (run) =>
        unless(
          /dictat/i.test(run.rows[0]?.answer ?? "") && /typo/i.test(run.rows[0]?.answer ?? ""),
          () => rowsText(run.rows),
        ),
    },
  ],
};

const newSession: TierACase = {
  id: "new-session-continuation",
  title: "New-session continuation: a second conversation picks up where the first stopped",
  turns: [
    { says: ONBOARD, model: [startOnboarding, askSuggested(0)] },
    {
      says: "Mostly tax disputes before the administrative courts.",
      model: saveAsked("Mostly tax disputes before the administrative courts."),
    },
    { says: ONBOARD, newSession: true, model: [startOnboarding, askSuggested(0, "Welcome back.")] },
    {
      says: "I'm a partner; my team is two associates and a paralegal.",
      model: saveAsked("I'm a partner; my team is two associates and a paralegal."),
    },
  ],
  checks: [
    {
      says: "the third turn is a new conversation",
      miss: (run) => {
        const [a, b, c, d] = run.turns.map((t) => t.sessionId);
        return unless(
          a === b && c === d && a !== c && !!a && !!c,
          () => `sessions ${[a, b, c, d]}`,
        );
      },
    },
    {
      says: "the new conversation reads what the first one saved",
      miss: (run) => {
        const read = reads(run, 2)
          .map((c) => c.result?.text ?? "")
          .join("\n");
        return unless(read.includes("tax disputes"), () => `turn 3 reads: ${list(reads(run, 2))}`);
      },
    },
    {
      says: "does not ask again what the first conversation saved",
      miss: (run) => {
        const first = saves(run, 1)[0];
        const again = first && asked(saidIn(run, 2), String(first.input.question));
        const ids = saves(run).map((c) => String(c.result?.json?.question_id));
        return unless(
          !again && new Set(ids).size === ids.length,
          () => `saves: ${list(saves(run))}`,
        );
      },
    },
    {
      says: "saves each answer as a new entry",
      miss: (run) =>
        createdIn(run, 1, /tax disputes/i) ??
        createdIn(run, 3, /partner/i) ??
        unless(run.rows.length === 2, () => rowsText(run.rows)),
    },
  ],
};

const DRAFTING = { question_id: "drafting-style", question: bank("drafting-style") };

const staleConflict: TierACase = {
  id: "stale-conflict-correction",
  title: "Correction after a stale conflict: re-read, resend, updated",
  seed: [{ ...DRAFTING, answer: "Short memos with bullet points." }],
  turns: [
    {
      says: "What does my working profile say about drafting?",
      model: [
        () => [readAll()],
        (ctx) => {
          const entry = entries(ctx).find((e) => e.question_id === DRAFTING.question_id);
          ctx.memo.version = entry?.answer_version ?? 0;
          return [say(`Your profile says: ${entry?.answer ?? "nothing about drafting"}`)];
        },
      ],
    },
    {
      says: "Please correct it: I now want full prose, no bullet points.",
      // Meanwhile the lawyer's other device changed the entry: what turn 1 read is stale.
      before: async ({ device }) => {
        await device.callTool({
          name: SAVE,
          arguments: {
            ...DRAFTING,
            answer: "Short memos with bullet points; no Latin.",
            expected_version: 1,
          },
        });
      },
      model: [
        (ctx) => [
          say(disclosure(ctx)),
          save({
            ...DRAFTING,
            answer: "Full prose, no bullet points.",
            expected_version: ctx.memo.version,
          }),
        ],
        (ctx) => (ctx.last(SAVE)?.outcome === "conflict" ? [readAll()] : [say("Corrected.")]),
        (ctx) => {
          const entry = entries(ctx).find((e) => e.question_id === DRAFTING.question_id);
          return [
            save({
              ...DRAFTING,
              answer: "Full prose, no bullet points.",
              expected_version: entry?.answer_version,
            }),
          ];
        },
        () => [
          say("Corrected. It had changed in the meantime; it now says what you just told me."),
        ],
      ],
    },
  ],
  checks: [
    {
      says: "the correction replaces the entry in place (one row, version 3)",
      miss: (run) => {
        const [row] = run.rows;
        return unless(
          run.rows.length === 1 &&
            row?.question_id === DRAFTING.question_id &&
            /prose/i.test(row.answer) &&
            row.version === 3,
          () => rowsText(run.rows),
        );
      },
    },
    {
      says: "a stale expected_version gets NORTH_CONFLICT",
      scriptedOnly: true,
      miss: (run) =>
        unless(
          saves(run).some((c) => code(c) === "NORTH_CONFLICT"),
          () => list(saves(run)),
        ),
    },
    {
      says: "every conflict is followed by a re-read and a resend that is updated",
      miss: (run) => {
        const bad = run.calls.filter((c, i) => {
          if (c.tool !== SAVE || outcome(c) !== "conflict") return false;
          const later = run.calls.slice(i + 1);
          const reread = later.findIndex((l) => l.tool === READ || l.tool === "north__briefing");
          return (
            reread < 0 ||
            !later.slice(reread).some((l) => l.tool === SAVE && outcome(l) === "updated")
          );
        });
        return unless(bad.length === 0, () => list(run.calls));
      },
    },
    {
      says: "the last save is updated",
      miss: (run) => {
        const last = saves(run).at(-1);
        return unless(!!last && outcome(last) === "updated", () => list(saves(run)));
      },
    },
  ],
};

const declineStop: TierACase = {
  id: "decline-stop",
  title: "Decline: nothing saved, no profile question again in the conversation",
  turns: [
    { says: ONBOARD, model: [startOnboarding, askSuggested(0)] },
    {
      says: "Actually, I'd rather not do this. Please stop asking me about how I work.",
      model: [() => [say("Understood. I won't ask again in this conversation.")]],
    },
    {
      says: "Thanks. In one sentence, what is a limitation period?",
      model: [() => [say("A limitation period is the time within which a claim must be brought.")]],
    },
  ],
  checks: [
    {
      says: "saves nothing",
      miss: (run) =>
        unless(
          saves(run).length === 0 && run.rows.length === 0,
          () => `${list(saves(run))}; ${rowsText(run.rows)}`,
        ),
    },
    {
      says: "picks no further profile question after the decline",
      miss: (run) =>
        unless(readsNext(run, 1).length + readsNext(run, 2).length === 0, () => list(run.calls)),
    },
    {
      says: "North's ledger holds the reads and no write",
      miss: (run) =>
        unless(
          run.audit.length > 0 && run.audit.every((a) => a.outcome === "read"),
          () => run.audit.map((a) => `${a.tool}:${a.outcome}`).join(", ") || "no audit events",
        ),
    },
  ],
};

const dontKnow: TierACase = {
  id: "dont-know",
  title: "\"I don't know\": saved as the lawyer's own uncertainty, or not at all",
  turns: [
    { says: ONBOARD, model: [startOnboarding, askSuggested(0)] },
    {
      says: "Honestly, I don't know. I haven't thought about it.",
      model: saveAsked("I don't know; I haven't thought about it yet.", (ctx) => [
        say(`Noted that you haven't decided. Next: ${suggestions(ctx)[1]?.question ?? ""}`),
      ]),
    },
  ],
  checks: [
    {
      says: "never invents an answer: whatever is saved says the lawyer does not know",
      miss: (run) => {
        const invented = saves(run).filter((c) => !UNCERTAIN.test(String(c.input.answer)));
        return unless(invented.length === 0, () => list(invented));
      },
    },
    {
      says: "every save it makes is accepted",
      miss: (run) => {
        const refused = saves(run).filter((c) => !["created", "noop"].includes(outcome(c) ?? ""));
        return unless(refused.length === 0, () => list(refused));
      },
    },
    {
      says: "North keeps the uncertainty as the lawyer's answer",
      scriptedOnly: true,
      miss: (run) =>
        unless(run.rows.length === 1 && UNCERTAIN.test(run.rows[0]?.answer ?? ""), () =>
          rowsText(run.rows),
        ),
    },
  ],
};

const CUSTOM_LAST = "When you send me a long email thread, what do you want from me first?";

const allAnswered: TierACase = {
  id: "every-suggestion-answered",
  title: "Every suggestion answered: no suggestions left, a custom question still saved",
  seed: QUESTION_BANK.map((q) => ({
    question_id: q.id,
    question: q.wording.en,
    answer: `Answer about ${q.id.replaceAll("-", " ")}.`,
  })),
  turns: [
    {
      says: "Let's talk about how I work. Is there anything else you'd like to know about me?",
      model: [
        () => [readNext()],
        (ctx) => {
          const next = suggestions(ctx)[0];
          ctx.memo.q = next?.question ?? CUSTOM_LAST;
          ctx.memo.qid = next?.question_id ?? "";
          return [say(`${disclosure(ctx)} ${ctx.memo.q}`)];
        },
      ],
    },
    {
      says: "A three-line summary at the top, then the open questions.",
      model: saveAsked("A three-line summary at the top, then the open questions."),
    },
  ],
  checks: [
    {
      says: "reads with view next, and North suggests nothing more",
      miss: (run) => {
        const next = readsNext(run);
        const left = next.flatMap((c) => (c.result?.json?.suggested_questions ?? []) as unknown[]);
        return unless(next.length > 0 && left.length === 0, () => list(next));
      },
    },
    {
      says: "asks a custom question and saves it as a new entry",
      miss: (run) =>
        createdIn(run, 1, /summary/i) ??
        seededKept(run, 1) ??
        unless(!!run.rows.at(-1)?.question_id.startsWith("auto:"), () => rowsText(run.rows)),
    },
    {
      says: "never says the profile is complete",
      miss: (run) => {
        const claim = saidIn(run).match(COMPLETION);
        return unless(!claim, () => `said ${JSON.stringify(claim?.[0])}`);
      },
    },
  ],
};

const LANGUAGES = { question: "Which languages do you work in?", answer: "French and English." };
const SUMMARY = {
  question: "What do you want at the top of every memo?",
  answer: "A one-paragraph summary.",
};

const rateLimited: TierACase = {
  id: "rate-limit-recovery",
  title: "Rate-limit recovery: the refused save is resent after retry_after_s, and saved",
  north: "tight",
  turns: [
    {
      says: "Please save two things to my working profile, as two separate answers: I work in French and English; and I want a one-paragraph summary at the top of every memo.",
      model: [
        (ctx) => [say(disclosure(ctx)), save(LANGUAGES)],
        () => [save(SUMMARY)],
        (ctx) => {
          const receipt = ctx.last(SAVE);
          if (receipt?.code !== "NORTH_RATE_LIMITED") return [say("Both saved.")];
          const wait = Number(receipt.retry_after_s);
          return [
            say(`North asks me to wait ${wait} s before saving the second one.`),
            sleep(wait),
          ];
        },
        () => [save(SUMMARY)],
        () => [say("Both saved.")],
      ],
    },
  ],
  checks: [
    {
      says: "a save over the budget gets NORTH_RATE_LIMITED with retry_after_s",
      miss: (run) =>
        unless(
          saves(run).some(
            (c) => code(c) === "NORTH_RATE_LIMITED" && Number(c.result?.json?.retry_after_s) > 0,
          ),
          () => list(saves(run)),
        ),
    },
    {
      says: "every refused save is resent after the wait, and saved",
      miss: (run) => {
        const calls = saves(run);
        const lost = calls.filter(
          (c, i) =>
            code(c) === "NORTH_RATE_LIMITED" &&
            !calls
              .slice(i + 1)
              .some(
                (l) =>
                  normalized(String(l.input.answer)) === normalized(String(c.input.answer)) &&
                  ["created", "noop"].includes(outcome(l) ?? ""),
              ),
        );
        return unless(lost.length === 0, () => list(calls));
      },
    },
    {
      says: "both answers end up saved, as two entries",
      miss: (run) =>
        unless(
          run.rows.length === 2 &&
            run.rows.some((r) => /French/.test(r.answer)) &&
            run.rows.some((r) => /summary/i.test(r.answer)),
          () => rowsText(run.rows),
        ),
    },
  ],
};

const CUSTOM_OWN = "Before you read my drafts, what should I always check first?";

const disclosureFirst: TierACase = {
  id: "disclosure-before-first-custom-save",
  title: "Disclosure before the first custom save: managers can see what is saved",
  turns: [
    {
      says: "Let's talk about how I work. Ask me one question of your own, not from any list.",
      model: [
        () => [readNext()],
        (ctx) => {
          ctx.memo.q = CUSTOM_OWN;
          ctx.memo.qid = "";
          return [say(`${disclosure(ctx)} Here is my question: ${CUSTOM_OWN}`)];
        },
      ],
    },
    {
      says: "I always want the risks listed before the recommendations.",
      model: saveAsked("I always want the risks listed before the recommendations."),
    },
  ],
  checks: [
    {
      says: "tells the lawyer, before the first save, that managers can see what is saved",
      miss: (run) => {
        const before = saidBeforeFirstSave(run);
        return unless(before !== undefined && DISCLOSED.test(before), () =>
          before === undefined
            ? "nothing was saved"
            : `said before saving: ${before.slice(0, 400)}`,
        );
      },
    },
    {
      says: "saves the custom question as asked, under an auto: id",
      miss: (run) => {
        const [row] = run.rows;
        return unless(
          run.rows.length === 1 &&
            !!row?.question_id.startsWith("auto:") &&
            !!row.question_text &&
            asked(saidIn(run), row.question_text) &&
            /risks/i.test(row.answer),
          () => rowsText(run.rows),
        );
      },
    },
  ],
};

const skipStopLater: TierACase = {
  id: "skip-stop-later",
  title: "Skip, then answer, then later: only the answered question is saved",
  turns: [
    {
      says: ONBOARD,
      model: [
        startOnboarding,
        (ctx) => {
          const [first, second] = suggestions(ctx);
          ctx.memo.q = second?.question ?? "";
          ctx.memo.qid = second?.question_id ?? "";
          return [say(`${disclosure(ctx)} ${first?.question ?? ""}`)];
        },
      ],
    },
    {
      says: "Skip that one, please.",
      model: [(ctx) => [say(`Sure. ${ctx.memo.q}`)]],
    },
    {
      says: "Mostly the commercial courts in Paris and Nanterre.",
      model: saveAsked("Mostly the commercial courts in Paris and Nanterre.", (ctx) => [
        say(`Saved. ${suggestions(ctx)[2]?.question ?? ""}`),
      ]),
    },
    {
      says: "Let's do the rest later.",
      model: [() => [say("Of course. We'll pick it up another time.")]],
    },
  ],
  checks: [
    noSave(1),
    {
      says: "saves the answer to the next question",
      miss: (run) => createdIn(run, 2, /Nanterre/),
    },
    {
      says: "saves nothing and picks no question once postponed",
      miss: (run) =>
        unless(saves(run, 3).length + readsNext(run, 3).length === 0, () => list(run.calls)),
    },
    {
      says: "ends with the one answered entry",
      miss: (run) =>
        unless(run.rows.length === 1 && /Nanterre/.test(run.rows[0]?.answer ?? ""), () =>
          rowsText(run.rows),
        ),
    },
    {
      says: "the save keeps the id of the bank question it asked",
      scriptedOnly: true,
      miss: (run) =>
        unless(run.rows[0]?.question_id === QUESTION_BANK[1]?.id, () => rowsText(run.rows)),
    },
  ],
};

/** Every Tier A case, in the order a run plays them. */
export const TIER_A_CASES: readonly TierACase[] = [
  firstOnboarding,
  adaptedQuestions,
  requestedContinuation,
  proactiveFollowUp,
  unrelatedCustom,
  newSession,
  staleConflict,
  declineStop,
  dontKnow,
  allAnswered,
  rateLimited,
  disclosureFirst,
  skipStopLater,
];
