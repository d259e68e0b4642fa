import {
  isLiveToken,
  listApiTokensForAdmin,
  listGrants,
  type MemberOverview,
  memberMatters,
  type ProfileEntry,
  readMemberOverview,
  readProfilesForAdmin,
  revokeApiTokenForAdmin,
  revokeGrant,
  type Tenant,
  type Tx,
} from "@north/db";
import type { Context } from "hono";
import type { ConsoleApp, ConsoleContext, Env, PageWork } from "../context.ts";
import { notFoundPage } from "../pages/error.ts";
import { refusedPage } from "../pages/login.ts";
import { type MemberView, memberPage } from "../pages/member.ts";
import { type MemberRow, membersPage } from "../pages/members.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A page's result when the member may not exist: refused (not a manager), missing, or found. */
type Lookup<T> = { kind: "refused" } | { kind: "missing" } | { kind: "found"; value: T };

/** The requester is not a manager (any more): the console's refusal page. */
const refused = <T>(): PageWork<Lookup<T>> => ({ value: { kind: "refused" }, outcome: "rejected" });
/** No such member, token or grant here: the console's 404, whoever it may belong to elsewhere. */
const missing = <T>(reason = "unknown_member"): PageWork<Lookup<T>> => ({
  value: { kind: "missing" },
  outcome: "rejected",
  reason,
});

type MemberPageData = Omit<MemberView, "sessionTokenId" | "message">;
type ProfileExport = { member: MemberOverview; entries: ProfileEntry[] };

const request = (tenant: Tenant) => ({
  organizationId: tenant.organizationId,
  requesterId: tenant.userId,
});

/**
 * The member of the manager's organisation with this id; `undefined` when there is none (an
 * unknown id, or another organisation's member: the function only reads the tenant's), `null`
 * when the requester is not a manager.
 */
async function findMember(
  tx: Tx,
  tenant: Tenant,
  userId: string,
): Promise<MemberOverview | undefined | null> {
  if (!UUID.test(userId)) return undefined;
  const overview = await readMemberOverview(tx, request(tenant));
  if (!overview.ok) return null;
  return overview.members.find((m) => m.userId.toLowerCase() === userId.toLowerCase());
}

/**
 * A page's work for the member of the manager's organisation with this id: refused when the
 * requester is not a manager (any more), the 404 for any other id, else `work` with the member.
 */
function forMember<T>(
  userId: string,
  work: (tx: Tx, tenant: Tenant, member: MemberOverview) => Promise<PageWork<Lookup<T>>>,
): (tx: Tx, tenant: Tenant) => Promise<PageWork<Lookup<T>>> {
  return async (tx, tenant) => {
    const member = await findMember(tx, tenant, userId);
    if (member === null) return refused();
    if (!member) return missing();
    return work(tx, tenant, member);
  };
}

/** What the page says after a revoke; the redirect carries only which kind, never an id. */
const MESSAGES = new Map([
  ["token", "The token was revoked: it is refused from its next request."],
  ["app", "The app was disconnected: it loses access at its next request."],
]);

/** Every member of the organisation with how many apps and tokens each holds. */
async function memberRows(tx: Tx, tenant: Tenant): Promise<PageWork<MemberRow[] | null>> {
  const overview = await readMemberOverview(tx, request(tenant));
  const tokens = await listApiTokensForAdmin(tx, request(tenant));
  if (!overview.ok || !tokens.ok) return { value: null, outcome: "rejected" };
  const grants = await listGrants(tx, { organizationId: tenant.organizationId });
  const count = <T extends { userId: string }>(list: readonly T[], userId: string) =>
    list.filter((item) => item.userId === userId).length;
  const live = tokens.tokens.filter((t) => isLiveToken(t));
  const value: MemberRow[] = overview.members.map((m) => ({
    ...m,
    apps: count(grants, m.userId),
    liveTokens: count(live, m.userId),
    tokens: count(tokens.tokens, m.userId),
  }));
  return { value, outcome: "read", affected: value.length };
}

/** One member's page: their answers, connected apps, tokens and matters. */
async function memberPageData(
  tx: Tx,
  tenant: Tenant,
  member: MemberOverview,
): Promise<PageWork<Lookup<MemberPageData>>> {
  const profiles = await readProfilesForAdmin(tx, request(tenant));
  const tokens = await listApiTokensForAdmin(tx, { ...request(tenant), userId: member.userId });
  if (!profiles.ok || !tokens.ok) return refused();
  const mine = { organizationId: tenant.organizationId, userId: member.userId };
  const grants = await listGrants(tx, mine);
  const entries = profiles.entries.filter((e) => e.ownerUserId === member.userId);
  const matters = await memberMatters(tx, mine);
  const view = { member, entries, grants, tokens: tokens.tokens, matters };
  return { value: { kind: "found", value: view }, outcome: "read", target: member.userId };
}

/** The member's answers for the JSON download, audited as a read of that member. */
async function profileExport(
  tx: Tx,
  tenant: Tenant,
  member: MemberOverview,
): Promise<PageWork<Lookup<ProfileExport>>> {
  const profiles = await readProfilesForAdmin(tx, request(tenant));
  if (!profiles.ok) return refused();
  const entries = profiles.entries
    .filter((e) => e.ownerUserId === member.userId)
    .map(({ ownerUserId: _owner, ownerEmail: _email, ...entry }) => entry);
  return {
    value: { kind: "found", value: { member, entries } },
    outcome: "read",
    target: member.userId,
    affected: entries.length,
  };
}

/** Revokes one of this member's tokens, in this organisation; a second click changes nothing. */
async function revokeMemberToken(
  tx: Tx,
  tenant: Tenant,
  member: MemberOverview,
  tokenId: string,
): Promise<PageWork<Lookup<string>>> {
  if (!UUID.test(tokenId)) return missing();
  const listed = await listApiTokensForAdmin(tx, { ...request(tenant), userId: member.userId });
  if (!listed.ok) return refused();
  const token = listed.tokens.find((t) => t.id.toLowerCase() === tokenId.toLowerCase());
  if (!token) return missing("unknown_token");
  const result = isLiveToken(token)
    ? await revokeApiTokenForAdmin(tx, { ...request(tenant), tokenId: token.id })
    : ({ ok: true, revoked: false } as const);
  if (!result.ok) return refused();
  const value = { kind: "found", value: member.userId } as const;
  // Already revoked or expired (a second click): nothing changed.
  return result.revoked
    ? { value, outcome: "revoked", reason: "manager", target: token.id }
    : { value, outcome: "noop", reason: "not_live", target: token.id };
}

/**
 * Disconnects one of this member's apps (RLS on members keeps it in the organisation), audited
 * like a revoke from the Connected apps page.
 */
async function revokeMemberGrant(
  tx: Tx,
  tenant: Tenant,
  member: MemberOverview,
  grantId: string,
): Promise<PageWork<Lookup<string>>> {
  const grants = await listGrants(tx, {
    organizationId: tenant.organizationId,
    userId: member.userId,
  });
  const grant = grants.some((g) => g.id === grantId)
    ? await revokeGrant(tx, grantId, tenant.organizationId)
    : null;
  if (!grant) return missing("unknown_grant");
  const value = { kind: "found", value: member.userId } as const;
  return { value, outcome: "revoked", reason: "manager", target: grant.clientId };
}

/** The console's answer to a lookup that found nothing: its refusal (403) or its 404. */
const notFound = (c: Context<Env>, lookup: Exclude<Lookup<unknown>, { kind: "found" }>) =>
  lookup.kind === "refused" ? c.html(refusedPage(), 403) : c.html(notFoundPage(), 404);

const formField = (form: Record<string, unknown>, name: string) =>
  typeof form[name] === "string" ? form[name] : "";

/**
 * Members (SPEC §8): every member with their onboarding, connected apps and tokens; one
 * member's page with their profile, its JSON download, and revoke for apps and tokens.
 */
export function memberRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
  app.get("/members", async (c) => {
    const rows = await ctx.asManager(c, "admin_members", memberRows);
    const csrf = c.get("manager").csrfToken;
    return rows ? c.html(membersPage(rows, csrf)) : c.html(refusedPage(), 403);
  });

  app.get("/members/:userId", async (c) => {
    const userId = c.req.param("userId");
    const found = await ctx.asManager(c, "admin_member", forMember(userId, memberPageData));
    if (found.kind !== "found") return notFound(c, found);
    const manager = c.get("manager");
    const message = MESSAGES.get(c.req.query("revoked") ?? "");
    return c.html(
      memberPage({ ...found.value, sessionTokenId: manager.tokenId, message }, manager.csrfToken),
    );
  });

  // The member's answers as a file: SPEC §8's JSON download, audited as a read of that member.
  app.get("/members/:userId/profile.json", async (c) => {
    const userId = c.req.param("userId");
    const found = await ctx.asManager(c, "admin_profile_export", forMember(userId, profileExport));
    if (found.kind !== "found") return notFound(c, found);
    const { member, entries } = found.value;
    const document = {
      member: { userId: member.userId, email: member.email, role: member.role },
      exportedAt: new Date().toISOString(),
      notice:
        "Each answer is the assistant's transcription of what the member said in conversation, not the member's own writing.",
      entries,
    };
    c.header("Content-Type", "application/json; charset=utf-8");
    c.header(
      "Content-Disposition",
      `attachment; filename="north-working-profile-${member.userId}.json"`,
    );
    return c.body(JSON.stringify(document, null, 2));
  });

  // Post/redirect/get. The token must be one of this member's, in this organisation.
  app.post("/members/:userId/tokens/revoke", async (c) => {
    const userId = c.req.param("userId");
    const tokenId = formField(await c.req.parseBody(), "token_id");
    const done = await ctx.asManager(
      c,
      "token_revoke",
      forMember(userId, (tx, tenant, member) => revokeMemberToken(tx, tenant, member, tokenId)),
    );
    if (done.kind !== "found") return notFound(c, done);
    return c.redirect(`/admin/members/${done.value}?revoked=token`, 303);
  });

  // Post/redirect/get. The grant must be one of this member's.
  app.post("/members/:userId/connections/revoke", async (c) => {
    const userId = c.req.param("userId");
    const grantId = formField(await c.req.parseBody(), "grant_id");
    const done = await ctx.asManager(
      c,
      "grant_revoke",
      forMember(userId, (tx, tenant, member) => revokeMemberGrant(tx, tenant, member, grantId)),
    );
    if (done.kind !== "found") return notFound(c, done);
    return c.redirect(`/admin/members/${done.value}?revoked=app`, 303);
  });
}
