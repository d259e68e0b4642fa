/**
 * The Tier A harness (issue 22, point 7): the working-profile plan's conversational cases, each
 * played through the real Claude Code CLI (`claude -p`, one run per lawyer turn, resumed by
 * session id) against North served in process on a test database. The model is either the
 * Messages API stand-in playing each case's scripted turns (`bun run test`, which proves the
 * harness and North's side of each case) or a real Claude model (`bun run test:tier-a`). The
 * code path is the same; only `ANTHROPIC_BASE_URL` and the key differ.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { addNorth, type ClaudeCode, startClaudeCode } from "../support/claude-code.ts";
import type { Block, MessagesApi, MessagesRequest } from "../support/messages-api.ts";
import { connectClient } from "../support/serve-process.ts";
import {
  type Lawyer,
  type NorthName,
  startTierANorth,
  type TierADatabase,
  type TierANorth,
} from "./north.ts";
import {
  describeTurn,
  parseRun,
  resultJson,
  SERVER_PREFIX,
  type ToolCall,
  type TurnTrace,
} from "./trace.ts";

type Json = Record<string, unknown>;

/** A working-profile row as the database holds it. */
export interface Row {
  question_id: string;
  question_text: string | null;
  answer: string;
  version: number;
}

/** One audit event of the lawyer's, oldest first. */
export interface AuditRow {
  tool: string;
  outcome: string;
  occurred_at: Date;
}

/** Everything a case's checks read once its turns are over. */
export interface CaseRun {
  turns: TurnTrace[];
  /** Every tool call of the case, in order, with its result. */
  calls: ToolCall[];
  /** The rows after seeding, before the first turn. */
  seeded: Row[];
  /** The rows at the end. */
  rows: Row[];
  audit: AuditRow[];
  scripted: boolean;
}

/** A check of a case's observable contract: undefined when it holds, else what missed. */
export interface Check {
  says: string;
  /** Only with the scripted model: proves North's side of a path a real model may avoid. */
  scriptedOnly?: boolean;
  miss(run: CaseRun): string | undefined;
}

/** What the scripted model knows when it answers one request. */
export interface ScriptContext {
  request: MessagesRequest;
  /** North's results this case's model has received so far, oldest first (every turn). */
  results: { tool: string; json?: Json; text: string; isError: boolean }[];
  /** The latest result of `tool`, if any. */
  last(tool: string): Json | undefined;
  /** The scripted model's notes, kept across the case's turns (the question it asked…). */
  memo: Record<string, string | number>;
  /** The description of `tool` (North's own name) as this request delivers it, or "". */
  description(tool: string): string;
  /** The lawyer's latest message as the model received it (a prompt arrives expanded). */
  lawyer(): string;
}

/** The scripted model's answer to one request of a turn: text and/or tool calls. */
export type ScriptedStep = (ctx: ScriptContext) => Block[];

export interface LawyerTurn {
  /** What the lawyer types (one `claude -p` run). */
  says: string;
  /** Starts a new conversation instead of resuming the case's last one. */
  newSession?: boolean;
  /** What happens outside the conversation before this turn (another device's save…). */
  before?: (side: { device: Client; lawyer: Lawyer }) => Promise<void>;
  /** The scripted model's answers to this turn's requests, in order. */
  model: ScriptedStep[];
}

export interface SeedAnswer {
  question: string;
  answer: string;
  question_id?: string;
}

export interface TierACase {
  id: string;
  title: string;
  /** Which North: `tight` has a write budget of one save per window. */
  north?: NorthName;
  /** Saved through the SDK client before the first turn (an earlier onboarding). */
  seed?: SeedAnswer[];
  turns: LawyerTurn[];
  checks: Check[];
}

export interface CaseReport {
  id: string;
  title: string;
  misses: string[];
  /** The case as a person reads it: every turn's text, calls and receipts, then the rows. */
  trace: string[];
}

export type ModelChoice =
  | { kind: "scripted"; messages: MessagesApi }
  | { kind: "real"; apiKey: string; baseUrl?: string; model: string };

export interface TierAOptions {
  database: TierADatabase;
  model: ModelChoice;
  /** The tight North's window, in seconds (its budget is one save per window). */
  windowS?: number;
}

export interface TierA {
  north: TierANorth;
  runCase(tierACase: TierACase): Promise<CaseReport>;
  close(): Promise<void>;
}

const TOOLS_ALLOWED = "mcp__north,Bash(sleep:*)";

/** Starts North (two servers, one database) and one Claude Code HOME for every case. */
export async function startTierA(options: TierAOptions): Promise<TierA> {
  const { model } = options;
  const scripted = model.kind === "scripted";
  const north = await startTierANorth(options.database, {
    windowS: options.windowS ?? (scripted ? 4 : 20),
  });
  let claude: ClaudeCode | undefined;
  try {
    claude = await startClaudeCode(
      scripted
        ? { messagesApi: model.messages.url }
        : { messagesApi: model.baseUrl, apiKey: model.apiKey },
    );
  } catch (error) {
    await north.close();
    throw error;
  }
  const host = claude;
  const runTimeoutMs = scripted ? 90_000 : 600_000;

  async function connectNorth(url: string, token: string): Promise<void> {
    await host.run(["mcp", "remove", "-s", "user", "north"]);
    await addNorth(host, url, ["--header", `Authorization: Bearer ${token}`]);
  }

  async function runCase(tierACase: TierACase): Promise<CaseReport> {
    const lawyer = await north.newLawyer(tierACase.id);
    const device = await connectClient(north.url("roomy"), lawyer.token);
    const turns: TurnTrace[] = [];
    const trace: string[] = [];
    const misses: string[] = [];
    try {
      for (const seed of tierACase.seed ?? []) {
        const saved = await device.callTool({
          name: "north__working_profile_answer",
          arguments: { ...seed },
        });
        const outcome = (saved.structuredContent as Json | undefined)?.outcome;
        if (outcome !== "created") throw new Error(`seeding ${tierACase.id}: ${outcome}`);
      }
      const seeded = await rowsOf(north, lawyer);
      await connectNorth(north.url(tierACase.north ?? "roomy"), lawyer.token);
      const script = scripted ? scriptFor(model.messages) : undefined;
      let sessionId = "";
      for (const [index, turn] of tierACase.turns.entries()) {
        await turn.before?.({ device, lawyer });
        script?.play(turn.model);
        const args = ["-p", turn.says, "--output-format", "stream-json", "--verbose"];
        args.push("--allowedTools", TOOLS_ALLOWED);
        if (model.kind === "real") args.push("--model", model.model);
        if (sessionId && !turn.newSession) args.push("--resume", sessionId);
        const run = await host.run(args, runTimeoutMs);
        const parsed = parseRun(run, index, turn.says);
        turns.push(parsed);
        sessionId = parsed.sessionId;
        if (parsed.isError) misses.push(`turn ${index + 1}: the run failed (exit ${run.code})`);
        if (parsed.northStatus !== "connected") {
          misses.push(`turn ${index + 1}: North was ${parsed.northStatus} in Claude Code`);
        }
      }
      script?.stop();
      const run: CaseRun = {
        turns,
        calls: turns.flatMap((t) =>
          t.events.flatMap((event) => (event.kind === "call" ? [event.call] : [])),
        ),
        seeded,
        rows: await rowsOf(north, lawyer),
        audit: await auditOf(north, lawyer),
        scripted,
      };
      for (const check of tierACase.checks) {
        if (check.scriptedOnly && !scripted) continue;
        const missed = check.miss(run);
        if (missed !== undefined) misses.push(`${check.says}: ${missed}`);
      }
      for (const turn of turns) trace.push(...describeTurn(turn));
      trace.push(`rows at the end (${run.rows.length}):`);
      for (const row of run.rows) {
        trace.push(
          `  ${row.question_id} v${row.version}: ${row.question_text ?? "(no text)"} → ${row.answer}`,
        );
      }
      trace.push(`audit: ${run.audit.map((a) => `${a.tool}:${a.outcome}`).join(", ")}`);
    } finally {
      await device.close();
    }
    return { id: tierACase.id, title: tierACase.title, misses, trace };
  }

  return {
    north,
    runCase,
    async close() {
      await host.close();
      await north.close();
    },
  };
}

async function rowsOf(north: TierANorth, lawyer: Lawyer): Promise<Row[]> {
  return north.owner.client<Row[]>`
    select question_id, question_text, answer, version from working_profile_answers
    where organization_id = ${lawyer.tenant.organizationId}
      and owner_user_id = ${lawyer.tenant.userId}
    order by created_at, question_id`;
}

async function auditOf(north: TierANorth, lawyer: Lawyer): Promise<AuditRow[]> {
  return north.owner.client<AuditRow[]>`
    select tool, outcome, occurred_at from audit_events
    where organization_id = ${lawyer.tenant.organizationId} and actor_id = ${lawyer.tenant.userId}
    order by occurred_at, id`;
}

/** The text of the latest user message that is not only tool results. */
function lawyerText(request: MessagesRequest): string {
  for (const message of [...(request.messages ?? [])].reverse()) {
    if (message.role !== "user") continue;
    if (typeof message.content === "string") return message.content;
    const parts = (message.content as Json[]).filter((part) => part.type === "text");
    if (parts.length) return parts.map((part) => String(part.text)).join("\n");
  }
  return "";
}

/**
 * The stand-in as a case's scripted model: each request of a turn that offers tools gets the
 * turn's next step (requests without tools, which Claude Code may send for its own purposes, get
 * a short text). Results are remembered for the whole case.
 */
function scriptFor(messages: MessagesApi) {
  const results: ScriptContext["results"] = [];
  const memo: ScriptContext["memo"] = {};
  let steps: ScriptedStep[] = [];
  let next = 0;
  messages.respond((request, seen) => {
    if (!request.tools?.length) return [{ type: "text", text: "North" }];
    for (const result of seen) {
      const tool = result.toolName.replace(SERVER_PREFIX, "");
      results.push({
        tool,
        text: result.text,
        json: resultJson(result.text),
        isError: result.isError,
      });
    }
    const step = steps[next];
    next += 1;
    if (!step) return [{ type: "text", text: "(the script has no more steps for this turn)" }];
    const ctx: ScriptContext = {
      request,
      results,
      memo,
      last: (tool) => results.findLast((r) => r.tool === tool)?.json,
      description: (tool) =>
        request.tools?.find((t) => t.name === `${SERVER_PREFIX}${tool}`)?.description ?? "",
      lawyer: () => lawyerText(request),
    };
    const blocks = step(ctx).filter((block) => block.type !== "text" || block.text !== "");
    return blocks.map((block) =>
      block.type === "tool_use" && block.name.startsWith("north__")
        ? { ...block, name: `${SERVER_PREFIX}${block.name}` }
        : block,
    );
  });
  return {
    play(turnSteps: ScriptedStep[]) {
      steps = turnSteps;
      next = 0;
    },
    stop() {
      messages.respond(null);
    },
  };
}
