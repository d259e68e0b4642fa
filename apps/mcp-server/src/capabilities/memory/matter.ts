import { isMatterReference, visibleMatter } from "@north/db";
import { z } from "zod";
import type { ToolContext, ToolOutcome } from "../../tool-definition.ts";

/** Longer than any reference (64): what is longer is refused like a matter nobody may see. */
const MATTER_INPUT_MAX = 200;

/** The `matter` field of remember, recall and the briefing (SPEC §5a). */
export const matterSchema = z
  .string()
  .max(MATTER_INPUT_MAX)
  .describe(
    "The matter this is about: the firm's matter number (e.g. '2026/0042'). Pass it whenever the lawyer names the client's matter or its number. A matter's memories never leave it: they are stored and recalled only with their matter named; without it, only firm-wide memories.",
  );

export const MATTER_UNAVAILABLE = {
  code: "NORTH_MATTER_UNAVAILABLE",
  message:
    "That matter is not available to you: nothing was stored or read. Check the matter number with the lawyer, or go on without it.",
} as const;

/** The matter as the audit row's target: fingerprinted by the runner, never stored in clear. */
export const matterTarget = (reference: string) => `matter:${reference.toLowerCase()}`;

/**
 * The matter a call names, when its caller may see it (PostgreSQL decides: visibleMatter); else
 * the one refusal SPEC §5a prescribes, the same whether the matter does not exist, is
 * restricted or the caller is screened, audited `rejected` with reason `matter_refused` with the matter as
 * a fingerprint. No `matter`: firm-wide, nothing to resolve.
 */
export async function resolveMatter(
  ctx: ToolContext,
  reference: string | undefined,
): Promise<
  | { ok: true; matter: { id: string; reference: string } | undefined }
  | { ok: false; refusal: ToolOutcome<never> }
> {
  if (reference === undefined) return { ok: true, matter: undefined };
  const matter = isMatterReference(reference)
    ? await visibleMatter(ctx.tx, { reference })
    : undefined;
  if (matter) return { ok: true, matter };
  return {
    ok: false,
    refusal: {
      text: `rejected: ${MATTER_UNAVAILABLE.code}. ${MATTER_UNAVAILABLE.message}`,
      isError: true,
      audit: { outcome: "rejected", reason: "matter_refused", target: matterTarget(reference) },
    },
  };
}
