import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { SCOPES } from "../principal.ts";
import { OFFLINE_ACCESS } from "./authorization-server.ts";
import type { SecretBox } from "./secret-box.ts";

/** What a member may be granted: everything but `admin`, which only managers hold. */
export function entitlement(role: "member" | "manager"): string[] {
  return [...SCOPES.filter((s) => s !== "admin" || role === "manager"), OFFLINE_ACCESS];
}

/**
 * A sign-in with an API token grants at most that token's scopes: a read-only token must not
 * become a read-write connector. The cap rides with the browser session as an encrypted cookie
 * bound to the authorization server's session id, so it ends with that session.
 */
const CAP_COOKIE = "north_sign_in_cap";

export function createScopeCap(secrets: SecretBox, secure: boolean, ttlS: number) {
  return {
    async set(c: Context, sessionId: string, scopes: readonly string[]) {
      setCookie(c, CAP_COOKIE, await secrets.encrypt(JSON.stringify({ sessionId, scopes })), {
        path: "/",
        httpOnly: true,
        secure,
        sameSite: "Lax",
        maxAge: ttlS,
      });
    },
    /** The scopes this session may grant: the role's entitlement, capped by a token sign-in. */
    async allowed(c: Context, sessionId: string, role: "member" | "manager"): Promise<string[]> {
      const allowed = entitlement(role);
      const raw = getCookie(c, CAP_COOKIE);
      if (!raw) return allowed;
      try {
        const cap = JSON.parse(await secrets.decrypt(raw)) as {
          sessionId: string;
          scopes: string[];
        };
        if (cap.sessionId !== sessionId) return allowed;
        return allowed.filter((s) => s === OFFLINE_ACCESS || cap.scopes.includes(s));
      } catch {
        return allowed;
      }
    },
  };
}

export type ScopeCap = ReturnType<typeof createScopeCap>;
