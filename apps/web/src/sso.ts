import { activeMemberForUser, type Database, recordAudit, withOrganization } from "@north/db";
import type { Context } from "hono";
import { refusedPage } from "./pages/login.ts";
import { DEFAULT_TIMEOUTS, type SessionTimeouts, startSession } from "./session.ts";

export interface ConsoleSignInOptions {
  db: Database;
  publicUrl?: string;
  sessionTimeouts?: Partial<SessionTimeouts>;
  requestId?: string;
}

/**
 * The end of a console sign-in through the organisation's IdP (SPEC §8): the sign-in pages have
 * mapped a verified identity to this member; the console opens its own server-side session for
 * them if they are a manager (the session is re-checked against their role on every request),
 * and refuses otherwise. Both are audited.
 */
export async function openConsoleSessionForMember(
  c: Context,
  member: { organizationId: string; userId: string },
  options: ConsoleSignInOptions,
): Promise<Response> {
  const active = await activeMemberForUser(options.db, member.userId);
  if (active?.role !== "manager" || active.organizationId !== member.organizationId) {
    await withOrganization(options.db, member.organizationId, (tx) =>
      recordAudit(tx, {
        tool: "admin_sign_in",
        outcome: "refused",
        reason: "not_manager",
        requestId: options.requestId ?? null,
      }),
    );
    return c.html(refusedPage(), 403);
  }
  await startSession(
    c,
    options.db,
    { ok: true, organizationId: member.organizationId, userId: member.userId, tokenId: null },
    {
      timeouts: { ...DEFAULT_TIMEOUTS, ...options.sessionTimeouts },
      publicUrl: options.publicUrl,
    },
    (tx) =>
      recordAudit(tx, {
        tool: "admin_sign_in",
        outcome: "created",
        reason: "idp",
        requestId: options.requestId ?? null,
      }),
  );
  return c.redirect("/admin/profiles", 303);
}
