import { exportMembers, organizationExists, recordAudit, withOrganization } from "@north/db";
import type { NorthConfig } from "./config.ts";
import { operatorTarget, requireUuid } from "./operator.ts";
import { CliError, openOwner } from "./runtime.ts";

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * `north export --org ORG [--user USER]` (SPEC §5): the members' working profiles and the
 * memories they wrote, for an access request or a move elsewhere. Audited (`export`, a read,
 * rows = members exported; the member fingerprinted when one is named).
 */
export async function exportCommand(config: NorthConfig, flags: { org?: string; user?: string }) {
  const organizationId = requireUuid(flags.org, "--org");
  const userId = flags.user === undefined ? undefined : requireUuid(flags.user, "--user");
  const runtime = await openOwner(config);
  try {
    if (!(await organizationExists(runtime.owner.db, organizationId))) {
      throw new CliError("no such organization");
    }
    const target = operatorTarget(config, runtime);
    const exported = await withOrganization(runtime.owner.db, organizationId, async (tx) => {
      const found = await exportMembers(tx, { organizationId, userId });
      if (userId && found.length === 0) return null;
      await recordAudit(tx, {
        tool: "export",
        outcome: "read",
        affected: found.length,
        target: userId ? target(userId) : undefined,
      });
      return found;
    });
    if (!exported) throw new CliError("that user is not a member of that organization");
    return {
      organization_id: organizationId,
      exported_at: new Date().toISOString(),
      members: exported.map((m) => ({
        user_id: m.userId,
        email: m.email,
        role: m.role,
        removed_at: iso(m.removedAt),
        working_profile: m.profile.map((e) => ({
          question_id: e.questionId,
          question: e.question,
          answer: e.answer,
          version: e.answerVersion,
          created_at: iso(e.createdAt),
          updated_at: iso(e.updatedAt),
        })),
        memories: m.memories.map((x) => ({
          memory_id: x.id,
          kind: x.kind,
          origin: x.origin,
          subject_type: x.subjectType,
          subject_id: x.subjectId,
          body: x.body,
          run: x.runId,
          created_at: iso(x.createdAt),
          expires_at: iso(x.expiresAt),
          erased_at: iso(x.forgottenAt),
          purged_at: iso(x.purgedAt),
        })),
      })),
    };
  } finally {
    await runtime.close();
  }
}
