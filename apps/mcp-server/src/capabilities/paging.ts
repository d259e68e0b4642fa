import { decodeCursor } from "@north/agent-runtime";
import { z } from "zod";
import type { ToolOutcome } from "../tool-definition.ts";

/** The `cursor` input of a paged read (SPEC §3b, decision 033). */
export const cursorSchema = (what: string) =>
  z.string().optional().describe(`The next_cursor of a previous result${what}, to read the rest.`);

/**
 * Where a paged read starts: after the position `cursor` holds, for `listing` (none: from the
 * start), or the refusal a cursor of another listing, or not North's, gets.
 */
export function startOf(
  cursor: string | undefined,
  listing: string,
): { ok: true; after: string | undefined } | { ok: false; refusal: ToolOutcome<never> } {
  if (cursor === undefined) return { ok: true, after: undefined };
  const decoded = decodeCursor(cursor, listing);
  if (decoded.ok) return { ok: true, after: decoded.value };
  return {
    ok: false,
    refusal: {
      text: `rejected: ${decoded.code}. ${decoded.message}`,
      isError: true,
      audit: { outcome: "rejected" },
    },
  };
}
