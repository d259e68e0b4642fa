import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

export interface Receipt {
  outcome: "created" | "updated" | "noop" | "conflict" | "rejected";
  question_id: string | null;
  answer_version: number | null;
  code?: string;
  message?: string;
  retry_after_s?: number;
}

export interface ProfileEntry {
  question_id: string;
  question: string;
  question_source: "recorded" | "bank" | "legacy_label";
  answer: string;
  answer_version: number;
  updated_at: string;
}

export interface ProfileView {
  entries: ProfileEntry[];
  suggested_questions?: { question_id: string; question: string }[];
}

export interface SaveArgs {
  question: string;
  answer: string;
  question_id?: string;
  expected_version?: number;
}

/** Calls the save tool and returns its receipt plus the raw result flags. */
export async function saveAnswer(client: Client, args: SaveArgs) {
  const result = await client.callTool({
    name: "north__working_profile_answer",
    arguments: { ...args },
  });
  const receipt = result.structuredContent as unknown as Receipt;
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? "";
  return { receipt, isError: result.isError === true, text };
}

export async function readProfile(
  client: Client,
  args: { view?: "all" | "next"; locale?: "en" | "fr" } = {},
): Promise<ProfileView> {
  const result = await client.callTool({ name: "north__working_profile", arguments: args });
  if (result.isError) throw new Error(`read failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as unknown as ProfileView;
}
