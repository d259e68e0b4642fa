import {
  type ActiveMember,
  activeMemberForUser,
  type Database,
  endBrowserSession,
  recordSignInSession,
  type SignInRecord,
  signInRecordFor,
} from "@north/db";
import type { AuthorizationServer } from "./authorization-server.ts";
import { grantableScopes } from "./entitlement.ts";

/** A person signed in on the authorization server's pages, as North recorded it. */
export interface SignedIn {
  sessionId: string;
  userId: string;
  member: ActiveMember;
  record: SignInRecord;
  /** What a grant opened in this session may carry (role, capped by a token sign-in). */
  grantable: string[];
}

/**
 * The authorization server's browser sessions as North keeps them (decision 029): opened only
 * after North authenticated the person, with a server-side record of how; a library session
 * without that record, or whose member left or changed organisation, counts as signed out.
 */
export function createBrowserSessions(db: Database, as: AuthorizationServer) {
  return {
    /**
     * Opens the library's session for an authenticated member and records how they signed in;
     * returns the Set-Cookie headers for the browser.
     */
    async open(record: SignInRecord): Promise<string[]> {
      const { sessionId, cookies } = await as.openSession(record.userId);
      await recordSignInSession(db, sessionId, record);
      return cookies;
    },

    /**
     * Who is signed in on this request, or null. A library session North holds no record of
     * (or no longer a member's) is ended on the spot, so the library never acts on it.
     */
    async current(headers: Headers): Promise<SignedIn | null> {
      const session = await as.api.getSession({ headers }).catch(() => null);
      if (!session) return null;
      const { id: sessionId } = session.session;
      const userId = session.user.id;
      const [record, member] = await Promise.all([
        signInRecordFor(db, sessionId, userId),
        activeMemberForUser(db, userId),
      ]);
      if (!record || !member || member.organizationId !== record.organizationId) {
        await endBrowserSession(db, sessionId);
        return null;
      }
      return { sessionId, userId, member, record, grantable: grantableScopes(member.role, record) };
    },

    /** Signs the browser out: the library session and North's record of it end. */
    async end(headers: Headers): Promise<void> {
      const session = await as.api.getSession({ headers }).catch(() => null);
      if (session) await endBrowserSession(db, session.session.id);
    },
  };
}

export type BrowserSessions = ReturnType<typeof createBrowserSessions>;
