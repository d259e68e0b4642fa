import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * A workspace worth looking at in the console, written the way hosts write it: over MCP with
 * each member's API token (the product path), so the console shows what real calls leave behind
 * — answers, memories with and without subjects, one erased, tool-call audit rows. Used by the
 * console layout suite and by `bun run screenshots`. Identities and tokens come from the caller
 * (the test's store calls, or the CLI in the script).
 */
export interface SeedMember {
  email: string;
  token: string;
}

/** A seeding call that fails must stop the seed, not leave the console suites an empty page. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`seeding ${name} failed`);
}

async function connect(mcpUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: "north-console-seed", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const ANSWERS: Array<[string, string]> = [
  ["Which practice area do you work in?", "Employment law, mostly for employers."],
  ["How do you like drafts presented?", "Short paragraphs, defined terms in bold, no footnotes."],
  ["Which jurisdictions come up most?", "France and Belgium; sometimes Luxembourg."],
];

const MEMORIES = [
  {
    kind: "fact",
    body: "Acme SAS's general counsel prefers calls before 10 a.m.",
    origin: "stated",
    subject_type: "client",
    subject_id: "Acme SAS",
  },
  {
    kind: "fact",
    body: "Acme SAS signed the framework agreement on 3 March.",
    origin: "stated",
    subject_type: "client",
    subject_id: "ACME sas",
  },
  {
    kind: "observation",
    body: "Hélène Dubois reviews redlines within a day.",
    origin: "inferred",
    subject_type: "person",
    subject_id: "Hélène Dubois",
  },
  {
    kind: "fact",
    body: "The firm's standard NDA term is two years.",
    origin: "stated",
  },
] as const;

/** Writes the answers and memories; returns how many of each. */
export async function seedWorkspaceOverMcp(
  mcpUrl: string,
  writers: readonly SeedMember[],
): Promise<{ answers: number; memories: number }> {
  let answers = 0;
  let memories = 0;
  for (const [index, writer] of writers.entries()) {
    const client = await connect(mcpUrl, writer.token);
    for (const [question, answer] of ANSWERS.slice(0, index === 0 ? 3 : 1)) {
      await call(client, "north__working_profile_answer", { question, answer });
      answers += 1;
    }
    if (index === 0) {
      for (const memory of MEMORIES) {
        await call(client, "north__memory_remember", { ...memory });
        memories += 1;
      }
      await call(client, "north__memory_recall", { query: "Acme" });
    }
    await client.close();
  }
  return { answers, memories };
}
