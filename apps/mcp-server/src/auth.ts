import { type Database, resolveApiToken } from "@north/db";
import type { Principal, Scope } from "./principal.ts";
import { SCOPES } from "./principal.ts";

/** The bearer credential of a request, or null. Only the Authorization header is read. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}

/** Resolves an API token string to a principal on the app login role (expiry, revocation included). */
export async function principalForToken(db: Database, token: string): Promise<Principal | null> {
  const resolved = await resolveApiToken(db, token);
  if (!resolved) return null;
  return {
    organizationId: resolved.organizationId,
    userId: resolved.userId,
    role: resolved.role,
    scopes: resolved.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
    tokenId: resolved.tokenId,
  };
}
