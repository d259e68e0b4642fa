/**
 * The vocabulary of the Tier A checks and scripted turns: which calls a run made, what North
 * answered, what the assistant said, and the scripted model's moves.
 */
import type { Block } from "../support/messages-api.ts";
import type { CaseRun, ScriptContext, ScriptedStep } from "./harness.ts";
import type { ToolCall } from "./trace.ts";

type Json = Record<string, unknown>;

export const READ = "north__working_profile";
export const SAVE = "north__working_profile_answer";
export const BRIEFING = "north__briefing";

/** The lawyer was told that managers can see what is saved (SPEC §4). */
export const DISCLOSED = /\bmanagers?\b/i;
/** An answer that states the lawyer's own uncertainty. */
export const UNCERTAIN =
  /(don['’]t|do not|doesn['’]t|does not) know|not sure|unsure|uncertain|undecided|(hasn['’]t|has not|haven['’]t|have not)( yet)? (thought|decided)|no (view|opinion|preference) yet/i;
/** A claim that the profile is finished, which nothing in North ever makes (SPEC §4). */
export const COMPLETION =
  /(profile|onboarding) is (now )?(complete|finished|done)|nothing (more|else) to (ask|add)|(completed?|finished) (your|the) (working )?profile/i;

export const callsTo = (run: CaseRun, tool: string, turn?: number): ToolCall[] =>
  run.calls.filter((c) => c.tool === tool && (turn === undefined || c.turn === turn));

export const saves = (run: CaseRun, turn?: number) => callsTo(run, SAVE, turn);

/** Reads of what is known: the profile (any view) or a briefing. */
export const reads = (run: CaseRun, turn?: number) =>
  run.calls.filter(
    (c) => (c.tool === READ || c.tool === BRIEFING) && (turn === undefined || c.turn === turn),
  );

export const readsNext = (run: CaseRun, turn?: number) =>
  callsTo(run, READ, turn).filter((c) => c.input.view === "next");

export const outcome = (call: ToolCall) => call.result?.json?.outcome as string | undefined;
export const code = (call: ToolCall) => call.result?.json?.code as string | undefined;

/** Everything the assistant wrote in a turn (or the whole case). */
export function saidIn(run: CaseRun, turn?: number): string {
  return run.turns
    .filter((t) => turn === undefined || t.turn === turn)
    .flatMap((t) => t.events.flatMap((e) => (e.kind === "text" ? [e.text] : [])))
    .join("\n");
}

/** What the assistant wrote before its first save, or undefined when it never saved. */
export function saidBeforeFirstSave(run: CaseRun): string | undefined {
  const text: string[] = [];
  for (const turn of run.turns) {
    for (const event of turn.events) {
      if (event.kind === "call" && event.call.tool === SAVE) return text.join("\n");
      if (event.kind === "text") text.push(event.text);
    }
  }
  return undefined;
}

/** Lowercase, one space, no closing punctuation: for "the wording actually asked". */
export const normalized = (text: string) =>
  text
    .toLowerCase()
    .replace(/[’]/g, "'")
    .replace(/\s+/g, " ")
    .replace(/[\s?.!:]+$/, "")
    .trim();

export const asked = (said: string, question: string) =>
  normalized(said).includes(normalized(question));

/** A miss when `ok` is false: `detail` says what was seen instead. */
export const unless = (ok: boolean, detail: () => string) => (ok ? undefined : detail());

export const list = (calls: ToolCall[]) =>
  calls
    .map((c) => `${c.tool}(turn ${c.turn + 1}) → ${c.result?.text.slice(0, 160) ?? "?"}`)
    .join("; ") || "none";

// The scripted model's moves.

export const say = (text: string): Block => ({ type: "text", text: text.trim() });
export const call = (name: string, input: Json): Block => ({
  type: "tool_use",
  id: "",
  name,
  input,
});
export const readNext = () => call(READ, { view: "next", locale: "en" });
export const readAll = () => call(READ, { view: "all" });
export const save = (input: Json) => call(SAVE, input);
export const sleep = (seconds: number) =>
  call("Bash", { command: `sleep ${seconds}`, description: "Wait as North asked" });

export interface Suggestion {
  question_id: string;
  question: string;
}

/** The suggested questions of the latest view-next read. */
export const suggestions = (ctx: ScriptContext): Suggestion[] =>
  (ctx.last(READ)?.suggested_questions ?? []) as Suggestion[];

export const entries = (ctx: ScriptContext) =>
  (ctx.last(READ)?.entries ?? []) as {
    question_id: string;
    answer: string;
    answer_version: number;
  }[];

/**
 * The disclosure, said only when the save tool's description, as Claude Code delivers it, tells
 * the model to (SPEC §3b: the disclosure rides on the save): a scripted model that discloses
 * because North asked it to.
 */
export const disclosure = (ctx: ScriptContext) =>
  /\bmanagers\b/i.test(ctx.description(SAVE))
    ? "Before I save anything: what I save is my transcription of your words, and your workspace's managers can see it."
    : "";

/** An onboarding turn's first move: what the expanded prompt asks, a view-next read. */
export const startOnboarding: ScriptedStep = (ctx) =>
  ctx.lawyer().includes(READ) ? [readNext()] : [say("I don't know that command.")];

/** Asks the `index`-th suggested question, noting it as the question asked. */
export const askSuggested =
  (index: number, lead = ""): ScriptedStep =>
  (ctx) => {
    const question = suggestions(ctx)[index];
    if (!question) return [say("North suggested nothing to ask.")];
    ctx.memo.q = question.question;
    ctx.memo.qid = question.question_id;
    return [say(`${disclosure(ctx)} ${lead} ${question.question}`)];
  };

/** Saves `answer` to the question noted as asked. */
export const saveAsked = (answer: string, then: ScriptedStep = () => [say("Saved.")]) => [
  (ctx: ScriptContext) => [
    save({
      question: ctx.memo.q,
      ...(ctx.memo.qid ? { question_id: ctx.memo.qid } : {}),
      answer,
    }),
  ],
  then,
];
