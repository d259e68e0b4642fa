import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

export interface RememberArgs {
  kind: "fact" | "observation";
  body: string;
  origin: "stated" | "inferred";
  subject_type?: string;
  subject_id?: string;
  expires_in_days?: number;
  conversation_id?: string;
  /** The matter's reference (SPEC §5a). */
  matter?: string;
}

/** Calls a tool and returns its structured content, first text and error flag. */
export async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? "";
  return {
    structured: result.structuredContent as Record<string, unknown> | undefined,
    text,
    isError: result.isError === true,
  };
}

export const remember = (client: Client, args: RememberArgs) =>
  call(client, "north__memory_remember", { ...args });

export const recall = (client: Client, args: Record<string, unknown> = {}) =>
  call(client, "north__memory_recall", args) as Promise<{
    structured: {
      mode: string;
      degraded?: string;
      block: string;
      memories: { memory_id: string; origin: string }[];
    };
    text: string;
    isError: boolean;
  }>;

export const held = (client: Client, subject_type: string, subject_id: string) =>
  call(client, "north__memory_held", { subject_type, subject_id }) as Promise<{
    structured: {
      memories: {
        memory_id: string;
        body: string | null;
        state: string;
        forgotten_by: string | null;
      }[];
    };
    text: string;
    isError: boolean;
  }>;

export const forget = (client: Client, args: Record<string, unknown>) =>
  call(client, "north__memory_forget", args);

export const briefing = (client: Client, args: Record<string, unknown> = {}) =>
  call(client, "north__briefing", args);
