/**
 * Issue 22, points 3 and 4 (SPEC §3b): every result that carries lawyer-written text has its fence
 * in `structuredContent` (Claude Code passes the model only that JSON), first, labelled, and the
 * text content says the same; and every result stays well below the 50,000 characters at which
 * Claude Code saves it to a file. A large profile pages, the briefing budgets it, and each says
 * what it left out and which call reads it. Through the real app with the SDK client; the real
 * Claude Code's view of the same results is test/hosts/claude-code-delivery.test.ts.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { useTestApp } from "../support/mcp.ts";
import { call as callTool, remember } from "../support/memory-tools.ts";
import { saveAnswer } from "../support/tools.ts";

const { db, harness } = useTestApp();
let ws: Workspace;
let client: Client;

/** Claude Code 2.1.197's limit: a result over 50,000 characters (or 25,000 tokens) goes to a file. */
const HOST_LIMIT = 50_000;
/** What the model receives from Claude Code when a result has `structuredContent`. */
const delivered = (structured: unknown) => JSON.stringify(structured);

const ANSWERS = 15;
const answerOf = (n: number) =>
  `Answer ${n}: ${"drafting preference ".repeat(475)}`.slice(0, 9_500);
const SUBJECT = { subject_type: "client", subject_id: "Jeanne Martin" };
const MEMORIES = 60;
const bodyOf = (n: number) =>
  `Memory ${n} about Jeanne Martin: ${"detail ".repeat(280)}`.slice(0, 1_990);

/** A tool call's result, its structured content an empty object when there is none. */
async function call(name: string, args: Record<string, unknown>) {
  const result = await callTool(client, name, args);
  return { ...result, structured: result.structured ?? {} };
}

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
  client = await harness.connect(ws.member);
  for (let n = 1; n <= ANSWERS; n++) {
    const saved = await saveAnswer(client, {
      question: `How do you like ${n}?`,
      answer: answerOf(n),
    });
    expect(saved.receipt.outcome).toBe("created");
  }
  for (let n = 1; n <= MEMORIES; n++) {
    const kept = await remember(client, {
      kind: "observation",
      origin: "stated",
      body: bodyOf(n),
      ...SUBJECT,
    });
    expect(kept.structured?.outcome).toBe("created");
  }
}, 120_000);
afterAll(async () => {
  await client?.close();
});

/** Reads every page of a paged tool, following next_cursor; returns the pages. */
async function allPages(name: string, args: Record<string, unknown>) {
  const pages: Awaited<ReturnType<typeof call>>[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(name, cursor ? { ...args, cursor } : args);
    expect(page.isError).toBe(false);
    pages.push(page);
    cursor = page.structured.next_cursor as string | undefined;
    expect(pages.length).toBeLessThan(50);
  } while (cursor);
  return pages;
}

describe("a large working profile (15 answers of 9,500 characters)", () => {
  it("reads in pages within the host's limit, each fenced first, together every entry once", async () => {
    const pages = await allPages("north__working_profile", {});
    expect(pages.length).toBeGreaterThan(1);
    const ids: string[] = [];
    for (const [index, page] of pages.entries()) {
      expect(delivered(page.structured).length).toBeLessThan(HOST_LIMIT * 0.8);
      expect(Object.keys(page.structured)[0]).toBe("block");
      const block = page.structured.block as string;
      expect(block.startsWith("<north-profile>")).toBe(true);
      expect(block).toContain("never instructions");
      expect(page.text).toContain(block);
      const entries = page.structured.entries as { question_id: string; answer: string }[];
      for (const entry of entries) {
        expect(block.indexOf(entry.answer.slice(0, 40))).toBeGreaterThan(0);
        ids.push(entry.question_id);
      }
      const last = index === pages.length - 1;
      expect(page.structured.left_out === undefined).toBe(last);
      if (!last) {
        expect(block).toMatch(
          new RegExp(
            `${page.structured.left_out} more profile entries were left out.*north__working_profile with cursor "${page.structured.next_cursor}"`,
          ),
        );
      }
    }
    expect(ids).toHaveLength(ANSWERS);
    expect(new Set(ids).size).toBe(ANSWERS);
  });

  it("refuses a cursor North did not write, saying how to recover", async () => {
    for (const cursor of [
      "not-a-cursor",
      Buffer.from("2026-01-01T00:00:00.000Z").toString("base64url"),
      "x".repeat(500),
    ]) {
      const result = await call("north__working_profile", { cursor });
      expect(result.isError).toBe(true);
      expect(result.text).toContain("NORTH_CURSOR_INVALID");
    }
  });

  it("is budgeted in the briefing: each body once, fenced, with what was left out and how to read it", async () => {
    const result = await call("north__briefing", {});
    const json = delivered(result.structured);
    expect(json.length).toBeLessThan(HOST_LIMIT * 0.8);
    expect(Object.keys(result.structured)[0]).toBe("block");
    const block = result.structured.block as string;
    expect(block.startsWith("<north-profile>")).toBe(true);
    expect(block).toContain("<north-memories");
    const left = result.structured.profile_left_out as number;
    expect(left).toBeGreaterThan(0);
    const shown = result.structured.profile_entries as unknown[];
    expect(shown.length + left).toBe(ANSWERS);
    expect(block).toContain(
      `north__working_profile with cursor "${result.structured.profile_next_cursor}"`,
    );
    // No body twice: an answer's text occurs once in what the host passes on.
    const sample = answerOf(1).slice(0, 60);
    expect(json.split(sample).length - 1).toBe(1);
    expect(result.text).toBe(block);
    // The cursor reads on where the briefing stopped.
    const rest = await call("north__working_profile", {
      cursor: result.structured.profile_next_cursor,
    });
    expect(rest.isError).toBe(false);
    expect((rest.structured.entries as { answer: string }[])[0]?.answer).toBe(
      answerOf(shown.length + 1),
    );
  });
});

describe("a subject with a large file (60 memories of 2,000 characters)", () => {
  it("is listed by held in pages within the host's limit, fenced first, every memory once", async () => {
    const pages = await allPages("north__memory_held", SUBJECT);
    expect(pages.length).toBeGreaterThan(1);
    const ids: string[] = [];
    for (const page of pages) {
      expect(delivered(page.structured).length).toBeLessThan(HOST_LIMIT * 0.8);
      expect(Object.keys(page.structured)[0]).toBe("block");
      const block = page.structured.block as string;
      expect(block.startsWith('<north-memories mode="subject-access">')).toBe(true);
      expect(page.text).toContain(block);
      for (const memory of page.structured.memories as { memory_id: string; body: string }[]) {
        expect(block).toContain(memory.body.slice(0, 40));
        ids.push(memory.memory_id);
      }
    }
    expect(new Set(ids).size).toBe(MEMORIES);
  });

  it("keeps recall within its token budget and says how many it left out", async () => {
    const result = await call("north__memory_recall", { ...SUBJECT, limit: 20 });
    const block = result.structured.block as string;
    expect(Object.keys(result.structured)[0]).toBe("block");
    expect(result.structured.left_out).toBeGreaterThan(0);
    expect(block).toContain(`${result.structured.left_out} more memories were left out`);
    expect(block).toContain("north__memory_recall");
  });
});
