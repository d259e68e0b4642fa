import type { GrantSummary } from "@north/db";
import { html } from "hono/html";
import { csrfField, layout, type Nav } from "./layout.ts";

export interface ConnectionRow extends GrantSummary {
  memberEmail: string;
}

/**
 * The apps members connected through sign-in (SPEC §3a): who, which app, what it may do, since
 * when, and a revoke button that ends its access on its next call.
 */
export function connectionsPage(rows: readonly ConnectionRow[], csrf: string, message?: string) {
  return layout(
    "Connected apps",
    html`${message ? html`<p class="notice success" role="status">${message}</p>` : ""}
      <p class="muted">Apps your members connected by signing in (claude.ai, Claude Desktop,
        Cowork, Claude Code…). Revoking one ends its access at its next request; the member can
        connect it again by signing in.</p>
      ${
        rows.length === 0
          ? html`<p>No connected apps.</p>`
          : html`<div class="table-wrap"><table>
        <thead><tr><th>Member</th><th>App</th><th>Access</th><th>Since (UTC)</th><th></th></tr></thead>
        <tbody>
          ${rows.map(
            (r) => html`<tr>
              <td data-label="Member">${r.memberEmail}</td>
              <td data-label="App">${r.clientName ?? r.clientId}</td>
              <td data-label="Access">${r.scopes.filter((s) => s !== "offline_access").join(", ")}</td>
              <td data-label="Since (UTC)">${r.createdAt ? r.createdAt.toISOString().replace("T", " ").slice(0, 16) : ""}</td>
              <td><form method="post" action="/admin/connections/revoke">${csrfField(csrf)}
                <input type="hidden" name="grant_id" value="${r.id}" />
                <button type="submit" class="danger">Revoke</button></form></td>
            </tr>`,
          )}
        </tbody>
      </table></div>`
      }`,
    { section: "connections", csrf } satisfies Nav,
  );
}
