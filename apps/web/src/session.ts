import { timingSafeEqual } from "node:crypto";
import {
  type Database,
  endAdminSession,
  openAdminSession,
  resolveAdminSession,
  resolveApiToken,
  type Tx,
  withTenant,
} from "@north/db";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

export const SESSION_COOKIE = "north_admin";
/** The form field every state-changing console form carries. */
export const CSRF_FIELD = "csrf_token";

export interface SessionTimeouts {
  /** Seconds without a request before the session ends; default 30 minutes. */
  idleS: number;
  /** Seconds after sign-in before the session ends whatever happens; default 8 hours. */
  absoluteS: number;
}

export const DEFAULT_TIMEOUTS: SessionTimeouts = { idleS: 30 * 60, absoluteS: 8 * 60 * 60 };

/** A signed-in manager: who they are, the token they signed in with, and their session. */
export interface Manager {
  organizationId: string;
  userId: string;
  /** Null when the session was opened through the organisation's IdP. */
  tokenId: string | null;
  sessionRowId: string;
  csrfToken: string;
}

export type SignIn =
  | { ok: true; organizationId: string; userId: string; tokenId: string | null }
  | { ok: false; reason: "invalid" }
  /** A valid token, but not a manager's with `admin`: who tried, for the audit row. */
  | { ok: false; reason: "not_manager"; organizationId: string; userId: string; tokenId: string };

/**
 * Checks a token for the console: valid (not expired, not revoked), a manager's, with the
 * `admin` scope. Used once, at sign-in; afterwards the session is checked instead.
 */
export async function signIn(db: Database, token: string): Promise<SignIn> {
  const resolved = await resolveApiToken(db, token);
  if (!resolved) return { ok: false, reason: "invalid" };
  if (resolved.role !== "manager" || !resolved.scopes.includes("admin")) {
    const { organizationId, userId, tokenId } = resolved;
    return { ok: false, reason: "not_manager", organizationId, userId, tokenId };
  }
  return {
    ok: true,
    organizationId: resolved.organizationId,
    userId: resolved.userId,
    tokenId: resolved.tokenId,
  };
}

/** Cookies are `Secure` when the public URL is https, or this request came over https. */
const isSecure = (c: Context, publicUrl: string | undefined) =>
  publicUrl?.startsWith("https:") === true || new URL(c.req.url).protocol === "https:";

/**
 * Opens a server-side session for a manager who just signed in, and hands the browser only its
 * opaque id: HttpOnly, SameSite=Strict, scoped to /admin, `Secure` over https.
 */
export async function startSession(
  c: Context,
  db: Database,
  manager: Extract<SignIn, { ok: true }>,
  options: { timeouts: SessionTimeouts; publicUrl?: string },
  /** Written in the same transaction as the session row (the sign-in's audit row). */
  inTransaction?: (tx: Tx) => Promise<void>,
): Promise<void> {
  const tenant = { organizationId: manager.organizationId, userId: manager.userId };
  const opened = await withTenant(db, tenant, async (tx) => {
    const session = await openAdminSession(tx, tenant, {
      tokenId: manager.tokenId,
      idleTimeoutS: options.timeouts.idleS,
      absoluteTimeoutS: options.timeouts.absoluteS,
    });
    await inTransaction?.(tx);
    return session;
  });
  setCookie(c, SESSION_COOKIE, opened.sessionId, {
    path: "/admin",
    httpOnly: true,
    sameSite: "Strict",
    secure: isSecure(c, options.publicUrl),
    maxAge: options.timeouts.absoluteS,
  });
}

/** The live session behind the request's cookie, or null; re-checked on every request. */
export async function currentSession(c: Context, db: Database): Promise<Manager | null> {
  const id = getCookie(c, SESSION_COOKIE);
  if (!id) return null;
  const session = await resolveAdminSession(db, id);
  return session ? { ...session } : null;
}

/** Ends the session server-side (a replayed cookie is refused), then clears the cookie. */
export async function endSession(
  c: Context,
  db: Database,
  manager: Manager,
  /** Written in the same transaction as the ending (the sign-out's audit row). */
  inTransaction?: (tx: Tx, ended: boolean) => Promise<void>,
): Promise<void> {
  await withTenant(db, manager, async (tx) => {
    const ended = await endAdminSession(tx, { sessionRowId: manager.sessionRowId });
    await inTransaction?.(tx, ended);
  });
  clearSessionCookie(c);
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/admin" });
}

/** Whether a posted CSRF token is the session's, compared in constant time. */
export function csrfMatches(manager: Manager, posted: unknown): boolean {
  if (typeof posted !== "string") return false;
  const expected = Buffer.from(manager.csrfToken, "utf8");
  const given = Buffer.from(posted, "utf8");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
