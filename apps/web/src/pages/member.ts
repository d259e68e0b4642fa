import {
  type AdminApiToken,
  type GrantSummary,
  isLiveToken,
  type MemberMatters,
  type MemberOverview,
  type ProfileEntry,
} from "@north/db";
import { html } from "hono/html";
import { csrfField, layout, type Nav } from "./layout.ts";
import { memberMattersSection } from "./matters.ts";
import { memberHref, memberStatus, onboarding, utc } from "./members.ts";
import { answerCells, profileJsonHref, transcriptionNotice } from "./profiles.ts";

export interface MemberView {
  member: MemberOverview;
  entries: readonly ProfileEntry[];
  grants: readonly GrantSummary[];
  tokens: readonly AdminApiToken[];
  /** The matters they are on the team of and screened from (SPEC §5a). */
  matters: MemberMatters;
  /** The token this console session was opened with: revoking it also ends the session. */
  sessionTokenId: string | null;
  message?: string;
}

const short = (id: string) => id.slice(0, 8);

function tokenState(t: AdminApiToken) {
  if (t.revokedAt) return html`<span class="tag erased">Revoked</span> ${utc(t.revokedAt)}`;
  if (!isLiveToken(t)) return html`<span class="tag">Expired</span>`;
  return html`<span class="tag live">Live</span>`;
}

function profileSection(view: MemberView) {
  const { member, entries } = view;
  if (entries.length === 0) {
    return html`<p><span class="tag">Not onboarded</span> ${member.email} has not saved any
      working-profile answer yet.</p>`;
  }
  return html`${transcriptionNotice}
    <p class="actions"><a class="button secondary" href="${profileJsonHref(member.userId)}">Download JSON</a></p>
    <div class="table-wrap">
      <table>
        <thead><tr><th scope="col">Question</th><th scope="col">Answer</th><th scope="col">Version</th><th scope="col">Updated</th></tr></thead>
        <tbody>
          ${entries.map((r) => html`<tr data-question-id="${r.questionId}">${answerCells(r)}</tr>`)}
        </tbody>
      </table>
    </div>`;
}

function appsSection(view: MemberView, csrf: string) {
  if (view.grants.length === 0) return html`<p class="muted">No connected apps.</p>`;
  const action = `${memberHref(view.member.userId)}/connections/revoke`;
  return html`<div class="table-wrap">
    <table>
      <thead><tr><th scope="col">App</th><th scope="col">Access</th><th scope="col">Since</th><th scope="col">Action</th></tr></thead>
      <tbody>
        ${view.grants.map((g) => {
          const name = g.clientName ?? g.clientId;
          return html`<tr data-grant-id="${g.id}">
            <td data-label="App">${name}</td>
            <td data-label="Access">${g.scopes.filter((s) => s !== "offline_access").join(", ")}</td>
            <td data-label="Since">${g.createdAt ? utc(g.createdAt) : ""}</td>
            <td data-label="Action"><form method="post" action="${action}"
                data-confirm="Disconnect ${name}? It loses access at its next request.">
              ${csrfField(csrf)}
              <input type="hidden" name="grant_id" value="${g.id}" />
              <button type="submit" class="danger" aria-label="Revoke ${name}">Revoke</button>
            </form></td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

function tokensSection(view: MemberView, csrf: string) {
  if (view.tokens.length === 0) return html`<p class="muted">No API tokens.</p>`;
  const action = `${memberHref(view.member.userId)}/tokens/revoke`;
  return html`<div class="table-wrap">
    <table>
      <thead><tr><th scope="col">Token</th><th scope="col">Access</th><th scope="col">Created</th>
        <th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col">Action</th></tr></thead>
      <tbody>
        ${view.tokens.map((t) => {
          const mine = t.id === view.sessionTokenId;
          const confirm = mine
            ? "This is the token you signed in with: revoking it also ends this console session. Revoke it?"
            : "Revoke this token? Whatever uses it loses access at its next request; this cannot be undone.";
          return html`<tr data-token-id="${t.id}" data-state="${isLiveToken(t) ? "live" : "ended"}">
            <td data-label="Token"><code>${short(t.id)}…</code>${mine ? html` <span class="tag">this session</span>` : ""}</td>
            <td data-label="Access">${t.scopes.join(", ")}</td>
            <td data-label="Created">${utc(t.createdAt)}</td>
            <td data-label="Expires">${t.expiresAt ? utc(t.expiresAt) : "Never"}</td>
            <td data-label="Last used">${t.lastUsedAt ? utc(t.lastUsedAt) : "Never"}</td>
            <td data-label="State">${tokenState(t)}</td>
            <td data-label="Action">${
              isLiveToken(t)
                ? html`<form method="post" action="${action}" data-confirm="${confirm}">
                    ${csrfField(csrf)}
                    <input type="hidden" name="token_id" value="${t.id}" />
                    <button type="submit" class="danger" aria-label="Revoke token ${short(t.id)}">Revoke</button>
                  </form>`
                : ""
            }</td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

/**
 * One member (SPEC §8 Members): who they are, their working profile with its JSON download,
 * and their connected apps and API tokens, each with revoke (post/redirect/get back here).
 */
export function memberPage(view: MemberView, csrf: string) {
  const { member } = view;
  // The email is not the page's heading: a long one would not wrap there on a phone.
  return layout(
    "Member",
    html`${view.message ? html`<p class="notice success" role="status">${view.message}</p>` : ""}
      <p class="member-email"><strong>${member.email}</strong></p>
      <dl class="member-summary">
        <dt>Role</dt><dd>${member.role}</dd>
        <dt>Status</dt><dd>${memberStatus(member)}</dd>
        <dt>Member since</dt><dd>${utc(member.createdAt)}</dd>
        <dt>Working profile</dt><dd>${onboarding(member)}</dd>
      </dl>
      <p><a href="/admin/members">All members</a></p>
      <h2>Working profile</h2>
      ${profileSection(view)}
      <h2>Matters</h2>
      ${memberMattersSection(view.matters)}
      <h2>Connected apps</h2>
      <p class="muted">Apps this member connected by signing in. Revoking one ends its access at
        its next request; the member can connect it again by signing in.</p>
      ${appsSection(view, csrf)}
      <h2>API tokens</h2>
      <p class="muted">Tokens created for this member by the operator (only their hashes are
        stored). Revoking one is final: whatever uses it is refused from its next request.</p>
      ${tokensSection(view, csrf)}`,
    { section: "members", csrf } satisfies Nav,
  );
}
