import { createHash } from "node:crypto";
import {
  type Database,
  recordAudit,
  revokeClientAccess,
  type TargetFingerprint,
  withTenant,
} from "@north/db";

/** SHA-256 base64url, as the library stores tokens: to find a presented refresh token's row. */
export const storedTokenHash = (token: string) =>
  createHash("sha256").update(token, "utf8").digest("base64url");

/**
 * Ends a member's access through one client and records why (`client`, `refresh_reuse`,
 * `operator`, `manager`).
 */
export async function revokeAndAudit(
  db: Database,
  grant: { organizationId: string; userId: string; clientId: string },
  reason: string,
  fingerprint: (value: string) => TargetFingerprint,
  requestId?: string,
) {
  await withTenant(
    db,
    { organizationId: grant.organizationId, userId: grant.userId },
    async (tx) => {
      await revokeClientAccess(tx, grant.userId, grant.clientId);
      await recordAudit(tx, {
        tool: reason === "refresh_reuse" ? "refresh_reuse" : "grant_revoke",
        outcome: "revoked",
        reason,
        requestId: requestId ?? null,
        target: fingerprint(grant.clientId),
      });
    },
  );
}
