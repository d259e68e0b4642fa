import type { MatterDetail, MatterMemoryRow, MatterSummary, MemberMatters } from "@north/db";
import { html } from "hono/html";
import { layout, type Nav } from "./layout.ts";
import { utc } from "./members.ts";

/** The console's pages of matters (SPEC §5a): the list, one matter, and a member's walls. */

export const matterHref = (reference: string) => `/admin/matters/${encodeURIComponent(reference)}`;

const access = (a: string) =>
  a === "restricted"
    ? html`<span class="tag">Restricted</span>`
    : html`<span class="tag live">Open</span>`;

const hold = (h: { reason: string; since: Date } | null) =>
  h ? html`<span class="tag erased">Legal hold</span> since ${utc(h.since)}` : html`—`;

/** Every matter: reference, name, client, access, team size, screens, hold, memory count. */
export function mattersPage(rows: readonly MatterSummary[], csrf: string) {
  return layout(
    "Matters",
    html`<p class="muted">Matters come from the firm's conflicts system (<code>north matter import</code>)
        or the operator CLI. A matter's memories are recalled only with the matter named, and only
        by members who may see it: not screened from it, and the matter open or they are on its team.
        Memory counts are what you may see.</p>
      ${
        rows.length === 0
          ? html`<p>No matters yet.</p>`
          : html`<div class="table-wrap"><table>
        <thead><tr><th scope="col">Reference</th><th scope="col">Name</th><th scope="col">Client</th>
          <th scope="col">Access</th><th scope="col">Team</th><th scope="col">Screens</th>
          <th scope="col">Hold</th><th scope="col">Memories</th></tr></thead>
        <tbody>
          ${rows.map(
            (m) => html`<tr>
              <td data-label="Reference"><a href="${matterHref(m.reference)}">${m.reference}</a></td>
              <td data-label="Name">${m.name}</td>
              <td data-label="Client">${m.client ?? "—"}</td>
              <td data-label="Access">${access(m.access)}</td>
              <td data-label="Team">${m.teamSize}</td>
              <td data-label="Screens">${m.screens}</td>
              <td data-label="Hold">${hold(m.hold)}</td>
              <td data-label="Memories">${m.memories}</td>
            </tr>`,
          )}
        </tbody>
      </table></div>`
      }`,
    { section: "matters", csrf } satisfies Nav,
  );
}

export interface MatterView {
  detail: MatterDetail;
  memories: readonly MatterMemoryRow[];
  /** The signed-in manager is screened from this matter: its memories are not shown. */
  screened: boolean;
}

function memorySection(view: MatterView) {
  if (view.screened) {
    return html`<p class="notice" role="status">You are screened from this matter: none of its
      memories are shown to you.</p>`;
  }
  if (view.memories.length === 0) return html`<p class="muted">No memories you may see.</p>`;
  return html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Written (UTC)</th><th scope="col">Kind</th><th scope="col">Subject</th>
      <th scope="col">Memory</th><th scope="col">Expires</th></tr></thead>
    <tbody>
      ${view.memories.map(
        (m) => html`<tr>
          <td data-label="Written (UTC)">${utc(m.createdAt)}</td>
          <td data-label="Kind">${m.kind} · ${m.origin}</td>
          <td data-label="Subject">${m.subjectType ? `${m.subjectType}: ${m.subjectId ?? ""}` : "—"}</td>
          <td data-label="Memory">${m.body}</td>
          <td data-label="Expires">${utc(m.expiresAt)}</td>
        </tr>`,
      )}
    </tbody>
  </table></div>`;
}

/** One matter: team, screens with reasons, hold, and its memories as this manager may see them. */
export function matterPage(view: MatterView, csrf: string) {
  const { detail } = view;
  return layout(
    `Matter ${detail.reference}`,
    html`<dl class="facts">
        <dt>Name</dt><dd>${detail.name}</dd>
        <dt>Client</dt><dd>${detail.client ?? "—"}</dd>
        <dt>Access</dt><dd>${access(detail.access)}</dd>
        <dt>Legal hold</dt><dd>${detail.hold ? html`${hold(detail.hold)}: ${detail.hold.reason}` : "None"}</dd>
      </dl>
      <h2>Team</h2>
      ${
        detail.team.length === 0
          ? html`<p class="muted">No one is on the team.</p>`
          : html`<ul>${detail.team.map((t) => html`<li>${t.email}</li>`)}</ul>`
      }
      <h2>Screens</h2>
      ${
        detail.screens.length === 0
          ? html`<p class="muted">No one is screened from this matter.</p>`
          : html`<div class="table-wrap"><table>
            <thead><tr><th scope="col">Member</th><th scope="col">Reason</th></tr></thead>
            <tbody>${detail.screens.map(
              (s) =>
                html`<tr><td data-label="Member">${s.email}</td><td data-label="Reason">${s.reason}</td></tr>`,
            )}</tbody></table></div>`
      }
      <h2>Memories</h2>
      ${memorySection(view)}`,
    { section: "matters", csrf } satisfies Nav,
  );
}

/** A member's walls, on their page: the matters they are on the team of and screened from. */
export function memberMattersSection(matters: MemberMatters) {
  if (matters.team.length === 0 && matters.screens.length === 0) {
    return html`<p class="muted">On no matter's team, screened from none.</p>`;
  }
  return html`${
    matters.team.length === 0
      ? ""
      : html`<p>On the team of: ${matters.team.map(
          (m, i) =>
            html`${i > 0 ? ", " : ""}<a href="${matterHref(m.reference)}">${m.reference}</a> (${m.name})`,
        )}</p>`
  }
  ${
    matters.screens.length === 0
      ? ""
      : html`<div class="table-wrap"><table>
        <thead><tr><th scope="col">Screened from</th><th scope="col">Reason</th></tr></thead>
        <tbody>${matters.screens.map(
          (s) =>
            html`<tr><td data-label="Screened from"><a href="${matterHref(s.reference)}">${s.reference}</a></td>
              <td data-label="Reason">${s.reason}</td></tr>`,
        )}</tbody></table></div>`
  }`;
}
