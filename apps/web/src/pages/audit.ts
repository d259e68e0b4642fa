import type { AdminAuditEvent } from "@north/db";
import { html } from "hono/html";
import { layout, type Nav } from "./layout.ts";

/** The ledger's recent events: who, which tool, which outcome; ids only as fingerprints. */
export function auditPage(events: readonly AdminAuditEvent[], csrf: string) {
  return layout(
    "Audit",
    html`<p class="muted">The most recent ${events.length} events. The ledger never holds a question,
        answer or memory; an id or subject appears only as a keyed fingerprint and its length.</p>
      <table>
        <thead><tr><th>Time (UTC)</th><th>Who</th><th>Tool</th><th>Outcome</th><th>Target</th><th>Rows</th></tr></thead>
        <tbody>
          ${events.map(
            (e) => html`<tr>
              <td>${e.occurredAt.toISOString().replace("T", " ").slice(0, 19)}</td>
              <td>${e.actorEmail ?? html`<span class="muted">system</span>`}</td>
              <td>${e.tool}</td>
              <td>${e.outcome}</td>
              <td>${e.targetFingerprint ? html`<code>${e.targetFingerprint.slice(0, 12)}…</code> (${e.targetLength} chars)` : ""}</td>
              <td>${e.affected ?? ""}</td>
            </tr>`,
          )}
        </tbody>
      </table>`,
    { section: "audit", csrf } satisfies Nav,
  );
}
