import {
  BRIEFING_TOOL,
  FORGET_TOOL,
  HELD_TOOL,
  READ_TOOL,
  RECALL_TOOL,
  REMEMBER_TOOL,
  SAVE_TOOL,
} from "@north/agent-runtime";
import { type AdminAuditEvent, AUDIT_OUTCOMES, type AuditCursor } from "@north/db";
import { html } from "hono/html";
import { layout, type Nav } from "./layout.ts";

/** The event kinds the ledger records (SPEC §7, §8), grouped for the filter's select. */
export const EVENT_KINDS = {
  "Assistant tools": [
    READ_TOOL,
    SAVE_TOOL,
    REMEMBER_TOOL,
    RECALL_TOOL,
    HELD_TOOL,
    FORGET_TOOL,
    BRIEFING_TOOL,
    // A JSON-RPC request refused over its protocol budget, before it reached any tool.
    "mcp_protocol",
  ],
  "Sign-in": ["sign_in", "consent", "refresh_reuse", "admin_sign_in", "admin_sign_out"],
  "Access changes": [
    "grant_revoke",
    "token_create",
    "token_revoke",
    "member_add",
    "member_remove",
    "member_role",
  ],
  Console: [
    "admin_profiles",
    "admin_members",
    "admin_member",
    "admin_profile_export",
    "admin_memory_subjects",
    "admin_memory_held",
    "admin_memory_forget",
    "admin_memory_export",
    "admin_connections",
    "admin_audit",
  ],
  System: ["north_purge", "org_set"],
} as const;

/** Events the operator CLI writes with no actor (a manager's own token revocation has one). */
const OPERATOR_KINDS: ReadonlySet<string> = new Set([
  "token_create",
  "token_revoke",
  "member_add",
  "member_remove",
  "member_role",
  "org_set",
]);

/** A member the Member filter offers (by email; the URL carries only the user id). */
export interface AuditMemberChoice {
  userId: string;
  email: string;
  removed: boolean;
}

/** The filters as the form shows them: the query's own strings, already checked. */
export interface AuditFilterValues {
  member: string;
  tool: string;
  outcome: string;
  /** `YYYY-MM-DD`, UTC, inclusive. */
  from: string;
  to: string;
}

export interface AuditView {
  events: readonly AdminAuditEvent[];
  members: readonly AuditMemberChoice[];
  filters: AuditFilterValues;
  older: AuditCursor | null;
  newer: AuditCursor | null;
  /** Whether this page was reached through a cursor (so "Newest" leads back to the start). */
  paged: boolean;
  /** A filter that could not be read: nothing is shown but the message and the form. */
  error?: string;
}

/** A cursor as the URL carries it: the exact UTC time, `_`, the event id. */
export const cursorParam = (cursor: AuditCursor) => `${cursor.time}_${cursor.id}`;

const readableUtc = (d: Date) => d.toISOString().replace("T", " ").slice(0, 19);

function pageHref(
  filters: AuditFilterValues,
  cursor?: { before?: AuditCursor; after?: AuditCursor },
) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
  if (cursor?.before) query.set("before", cursorParam(cursor.before));
  if (cursor?.after) query.set("after", cursorParam(cursor.after));
  const text = query.toString();
  return text ? `/admin/audit?${text}` : "/admin/audit";
}

function who(e: AdminAuditEvent) {
  if (e.actorEmail) return e.actorEmail;
  const label = OPERATOR_KINDS.has(e.tool) || e.reason === "operator" ? "operator" : "system";
  return html`<span class="muted">${label}</span>`;
}

function filterForm(view: AuditView) {
  const f = view.filters;
  const selected = (on: boolean) => (on ? html` selected` : "");
  const knownTools: readonly string[] = Object.values(EVENT_KINDS).flat();
  return html`<form method="get" action="/admin/audit" class="filters" aria-label="Filter events">
    <label>Member
      <select name="member">
        <option value="">Any member</option>
        ${view.members.map(
          (m) =>
            html`<option value="${m.userId}"${selected(m.userId === f.member)}>${m.email}${m.removed ? " (removed)" : ""}</option>`,
        )}
      </select>
    </label>
    <label>Event
      <select name="tool">
        <option value="">Any event</option>
        ${Object.entries(EVENT_KINDS).map(
          ([group, kinds]) =>
            html`<optgroup label="${group}">${kinds.map(
              (k) => html`<option value="${k}"${selected(k === f.tool)}>${k}</option>`,
            )}</optgroup>`,
        )}
        ${f.tool && !knownTools.includes(f.tool) ? html`<option value="${f.tool}" selected>${f.tool}</option>` : ""}
      </select>
    </label>
    <label>Outcome
      <select name="outcome">
        <option value="">Any outcome</option>
        ${AUDIT_OUTCOMES.map((o) => html`<option value="${o}"${selected(o === f.outcome)}>${o}</option>`)}
      </select>
    </label>
    <label>From (UTC)
      <input type="date" name="from" value="${f.from}" />
    </label>
    <label>To (UTC, inclusive)
      <input type="date" name="to" value="${f.to}" />
    </label>
    <button type="submit">Show events</button>
    <a href="/admin/audit">Clear filters</a>
  </form>`;
}

function eventTable(events: readonly AdminAuditEvent[]) {
  return html`<div class="table-wrap"><table>
    <thead><tr><th>Time (UTC)</th><th>Who</th><th>Event</th><th>Outcome</th><th>Reason</th><th>Target</th><th>Rows</th></tr></thead>
    <tbody>
      ${events.map(
        (e) => html`<tr data-event-id="${e.id}">
          <td data-label="Time (UTC)"><time datetime="${e.occurredAt.toISOString()}">${readableUtc(e.occurredAt)}</time></td>
          <td data-label="Who">${who(e)}</td>
          <td data-label="Event">${e.tool}</td>
          <td data-label="Outcome">${e.outcome}</td>
          <td data-label="Reason">${e.reason ?? ""}</td>
          <td data-label="Target">${
            e.targetFingerprint
              ? html`<code>${e.targetFingerprint.slice(0, 12)}…</code> (${e.targetLength} chars)`
              : ""
          }</td>
          <td data-label="Rows">${e.affected ?? ""}</td>
        </tr>`,
      )}
    </tbody>
  </table></div>`;
}

function pager(view: AuditView) {
  if (!view.paged && !view.older) return "";
  return html`<nav class="pager" aria-label="Pages">
    ${view.paged ? html`<a href="${pageHref(view.filters)}">Newest</a>` : ""}
    ${view.newer ? html`<a href="${pageHref(view.filters, { after: view.newer })}" rel="prev">Newer</a>` : ""}
    ${view.older ? html`<a href="${pageHref(view.filters, { before: view.older })}" rel="next">Next page</a>` : ""}
  </nav>`;
}

/**
 * The ledger, filtered and paged (SPEC §8): who, which event, which outcome and why; ids and
 * subjects only as fingerprints. Filters travel in the URL: they are ids and codes, never a name.
 */
export function auditPage(view: AuditView, csrf: string) {
  const filtered = Object.values(view.filters).some(Boolean);
  const body = view.error
    ? html`<p class="notice error" role="alert">${view.error}</p>`
    : view.events.length === 0
      ? html`<p class="notice" role="status">${
          filtered || view.paged ? "No events match these filters." : "No events recorded yet."
        }</p>${pager(view)}`
      : html`<p class="muted">${view.events.length} events, newest first.</p>
          ${eventTable(view.events)}${pager(view)}`;
  return layout(
    "Audit",
    html`<p class="muted">Tool calls, sign-ins and refusals, consents, grants, tokens, member
        changes and console actions. The ledger never holds a question, answer or memory; an id
        or subject appears only as a keyed fingerprint and its length.</p>
      ${filterForm(view)}
      ${body}`,
    { section: "audit", csrf } satisfies Nav,
  );
}
