import { checkSubjectLookup, FORGET_TOOL, subjectKey, subjectKeyOf } from "@north/agent-runtime";
import {
  type ForgetTarget,
  forgetMemories,
  memoriesWithheld,
  othersMemoriesMatching,
} from "@north/db";
import { z } from "zod";
import type { ToolContext, ToolDefinition } from "../../tool-definition.ts";
import { subjectLookupIdSchema, subjectLookupTypeSchema } from "./schemas.ts";

const inputSchema = z.object({
  subject_type: subjectLookupTypeSchema.optional(),
  subject_id: subjectLookupIdSchema.optional(),
  memory_id: z.string().uuid().optional().describe("One memory to forget, instead of a subject."),
});

const outputSchema = z.object({
  outcome: z
    .enum(["forgotten", "noop", "rejected"])
    .describe(
      "forgotten: bodies removed, tombstones kept. noop: nothing left to forget. rejected: see code.",
    ),
  forgotten: z.number().int().describe("How many memories were erased by this call."),
  remaining: z
    .number()
    .int()
    .describe(
      "How many memories about the subject are still held that you may not erase (written by others; a manager can; or under legal hold). Tell the lawyer when it is not 0.",
    ),
  held_back: z
    .number()
    .int()
    .optional()
    .describe(
      "Present when memories were not erased because their matter is under legal hold (code NORTH_LEGAL_HOLD): how many. They stay until the hold is released.",
    ),
  withheld: z
    .number()
    .int()
    .optional()
    .describe(
      "Present when memories about the subject sit in matters you may not see: how many (a count only). They were not erased; tell the lawyer, never that nothing is left.",
    ),
  code: z.string().optional(),
  message: z.string().optional(),
  retry_after_s: z.number().int().optional(),
});

const targetOf = (input: z.output<typeof inputSchema>) =>
  input.memory_id ?? subjectKeyOf(input.subject_type, input.subject_id);

/** What a call asks to erase, or why it names nothing erasable (the handler's refusal). */
function forgetTargetOf(
  input: z.output<typeof inputSchema>,
  fingerprintSubject: ToolContext["fingerprintSubject"],
):
  | { ok: true; target: ForgetTarget; bySubject: boolean }
  | { ok: false; code: string; message: string } {
  const bySubject = input.subject_type !== undefined || input.subject_id !== undefined;
  if (bySubject === (input.memory_id !== undefined)) {
    const message = "Send either subject_type and subject_id, or memory_id. Nothing was erased.";
    return { ok: false, code: "NORTH_TARGET_MISSING", message };
  }
  if (!bySubject) return { ok: true, target: { memoryId: input.memory_id as string }, bySubject };
  const subject = checkSubjectLookup(input.subject_type, input.subject_id);
  if (!subject.ok) {
    return { ok: false, code: subject.code, message: `${subject.message} Nothing was erased.` };
  }
  const target = {
    subjectFingerprint: fingerprintSubject(subjectKey(subject.value)),
    subjectType: subject.value.type,
  };
  return { ok: true, target, bySubject };
}

export const forgetTool = {
  name: FORGET_TOOL,
  title: "Forget (erase) memories",
  description: [
    "Erasure: forgets what the workspace holds about a subject (subject_type + subject_id), or one memory (memory_id), in one step.",
    "The body is removed for good; a tombstone records who erased it and when. Confirm with the lawyer before calling: say what will be erased, and wait for their yes.",
    "A member erases only the memories they wrote; erasing everything about a subject is a workspace manager's act (it needs the admin scope, which North asks for).",
    "The receipt says how many were erased (forgotten) and how many remain that you may not erase (remaining): tell the lawyer both, and never say nothing is left while remaining is above 0. Check with north__memory_held.",
  ].join(" "),
  kind: "write",
  inputSchema,
  outputSchema,
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  auditTarget: targetOf,
  refusalReceipt: (_input, refusal) => ({
    outcome: "rejected",
    forgotten: 0,
    remaining: 0,
    ...refusal,
  }),
  // A manager whose token lacks admin, about to leave what colleagues wrote: the host is asked to
  // re-authorize with admin before anything is erased, so the retried call erases it all at once.
  // A member can never hold admin, so a member is never asked (decision 030).
  async stepUp(input, ctx) {
    if (ctx.principal.role !== "manager" || ctx.principal.scopes.includes("admin")) return [];
    const call = forgetTargetOf(input, ctx.fingerprintSubject);
    if (!call.ok) return [];
    const others = await othersMemoriesMatching(ctx.tx, {
      requester: ctx.tenant,
      target: call.target,
    });
    return others > 0 ? ["admin"] : [];
  },
  async handler(input, ctx) {
    const call = forgetTargetOf(input, ctx.fingerprintSubject);
    if (!call.ok) {
      return {
        structured: {
          outcome: "rejected",
          forgotten: 0,
          remaining: 0,
          code: call.code,
          message: call.message,
        },
        text: `rejected: ${call.code}. ${call.message}`,
        isError: true,
        audit: { outcome: "rejected" },
      };
    }
    const { target, bySubject } = call;
    const result = await forgetMemories(ctx.tx, {
      requester: ctx.tenant,
      // Erasing across the organisation is a manager's act under the admin scope (SPEC §5).
      isManager: ctx.principal.role === "manager" && ctx.principal.scopes.includes("admin"),
      target,
    });
    if (result.outcome === "rejected") {
      return {
        structured: {
          outcome: "rejected",
          forgotten: 0,
          remaining: 0,
          code: result.code,
          message: result.message,
        },
        text: `rejected: ${result.code}. ${result.message}`,
        isError: true,
        audit: { outcome: "rejected", target: targetOf(input) },
      };
    }
    // Memories about the subject behind a wall this caller may not see: never "nothing remains".
    const withheld =
      "subjectFingerprint" in target
        ? await memoriesWithheld(ctx.tx, {
            subjectFingerprint: target.subjectFingerprint,
            subjectType: target.subjectType,
          })
        : 0;
    const behindWalls =
      withheld > 0
        ? ` ${withheld} more about this subject sit in matters you may not see: they were not erased.`
        : "";
    const heldBack =
      result.heldBack > 0
        ? ` ${result.heldBack} were not erased: their matter is under legal hold (NORTH_LEGAL_HOLD); they stay until the hold is released.`
        : "";
    // What remains besides the held-back ones: written by colleagues, erasable by a manager.
    const others = result.remaining - result.heldBack;
    const left =
      others > 0
        ? ` ${others} memories about this subject remain that you may not erase: written by colleagues, only a workspace manager can erase them.`
        : bySubject && result.remaining === 0 && withheld === 0
          ? " Nothing about this subject remains."
          : "";
    return {
      structured: {
        outcome: result.outcome,
        forgotten: result.forgotten,
        remaining: result.remaining,
        ...(result.heldBack > 0 ? { held_back: result.heldBack, code: "NORTH_LEGAL_HOLD" } : {}),
        ...(withheld > 0 ? { withheld } : {}),
      },
      text: `${result.outcome}: ${result.forgotten} memories erased (bodies removed, tombstones kept).${heldBack}${left}${behindWalls}`,
      audit: { outcome: result.outcome, target: targetOf(input), affected: result.forgotten },
    };
  },
} satisfies ToolDefinition<typeof inputSchema, typeof outputSchema>;
