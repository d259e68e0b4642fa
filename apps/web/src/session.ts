import { type Database, resolveApiToken } from "@north/db";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

export const SESSION_COOKIE = "north_admin";
const EIGHT_HOURS_S = 8 * 60 * 60;

/** A signed-in manager: the token's principal, with the role North holds for them. */
export interface Manager {
  organizationId: string;
  userId: string;
  tokenId: string;
}

export type SignIn =
  | { ok: true; manager: Manager }
  | { ok: false; reason: "invalid" | "not_manager" };

/**
 * Checks a token for the console: valid (not expired, not revoked), a manager's, with the
 * `admin` scope. Checked again on every request, so revocation takes effect at once.
 */
export async function signIn(db: Database, token: string): Promise<SignIn> {
  const resolved = await resolveApiToken(db, token);
  if (!resolved) return { ok: false, reason: "invalid" };
  if (resolved.role !== "manager" || !resolved.scopes.includes("admin")) {
    return { ok: false, reason: "not_manager" };
  }
  return {
    ok: true,
    manager: {
      organizationId: resolved.organizationId,
      userId: resolved.userId,
      tokenId: resolved.tokenId,
    },
  };
}

/**
 * The session is the token itself in an HttpOnly, SameSite=Strict cookie scoped to /admin: no
 * server-side state, and a cross-site form can never carry it.
 */
export function startSession(c: Context, token: string): void {
  setCookie(c, SESSION_COOKIE, token, {
    path: "/admin",
    httpOnly: true,
    sameSite: "Strict",
    secure: new URL(c.req.url).protocol === "https:",
    maxAge: EIGHT_HOURS_S,
  });
}

export function endSession(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/admin" });
}

/** The session token, from the cookie or (for scripts) an Authorization header. */
export function sessionToken(c: Context): string | undefined {
  const header = c.req.header("authorization");
  if (header?.startsWith("Bearer ")) return header.slice(7).trim();
  return getCookie(c, SESSION_COOKIE);
}
