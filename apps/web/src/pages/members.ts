import type { MemberOverview } from "@north/db";
import { html } from "hono/html";
import { layout, type Nav } from "./layout.ts";

/** A member on the Members page: the overview, with their connected apps and live tokens. */
export interface MemberRow extends MemberOverview {
  apps: number;
  /** Tokens neither revoked nor expired. */
  liveTokens: number;
  /** Every token they ever had, revoked and expired included. */
  tokens: number;
}

/** A readable instant, "2026-11-30 14:05 UTC", in a `<time>` that carries the exact one. */
export const utc = (d: Date) =>
  html`<time datetime="${d.toISOString()}">${d.toISOString().replace("T", " ").slice(0, 16)} UTC</time>`;

/** "Active", or "Removed" with the date: removed members keep their rows for the records. */
export const memberStatus = (m: Pick<MemberOverview, "removedAt">) =>
  m.removedAt ? html`<span class="tag erased">Removed</span> ${utc(m.removedAt)}` : "Active";

/** How far a member has onboarded: their answer count and newest update, or "Not onboarded". */
export const onboarding = (m: Pick<MemberOverview, "answers" | "lastAnswerAt">) =>
  m.answers === 0 || !m.lastAnswerAt
    ? html`<span class="tag" data-onboarded="false">Not onboarded</span>`
    : html`<span data-onboarded="true">${m.answers} ${m.answers === 1 ? "answer" : "answers"}</span>,
        last updated ${utc(m.lastAnswerAt)}`;

export const memberHref = (userId: string) => `/admin/members/${userId}`;

/**
 * Every member of the workspace (SPEC §8), removed ones and those who have not onboarded
 * included, with their role, connected apps and API tokens; each links to the member's page,
 * where apps and tokens can be revoked.
 */
export function membersPage(rows: readonly MemberRow[], csrf: string) {
  const waiting = rows.filter((r) => r.answers === 0 && !r.removedAt).length;
  return layout(
    "Members",
    html`<p class="muted">Everyone in this workspace, removed members included. A member who has
        not saved any working-profile answer yet has not onboarded. Open a member to see their
        profile, disconnect their apps or revoke their tokens.</p>
      <p>${rows.length} ${rows.length === 1 ? "member" : "members"}${waiting ? html`, ${waiting} not onboarded` : ""}.</p>
      <div class="table-wrap">
        <table>
          <thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Status</th>
            <th scope="col">Working profile</th><th scope="col">Connected apps</th><th scope="col">API tokens</th></tr></thead>
          <tbody>
            ${rows.map(
              (r) => html`<tr data-member-id="${r.userId}">
                <td data-label="Member"><a href="${memberHref(r.userId)}">${r.email}</a></td>
                <td data-label="Role">${r.role}</td>
                <td data-label="Status">${memberStatus(r)}</td>
                <td data-label="Working profile">${onboarding(r)}</td>
                <td data-label="Connected apps" data-count="${r.apps}">${r.apps}</td>
                <td data-label="API tokens" data-count="${r.liveTokens}">${r.liveTokens} live${
                  r.tokens > r.liveTokens
                    ? html` <span class="muted">(${r.tokens - r.liveTokens} revoked or expired)</span>`
                    : ""
                }</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>`,
    { section: "members", csrf } satisfies Nav,
  );
}
