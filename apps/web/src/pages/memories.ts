import type { HeldMemory } from "@north/db";
import { html } from "hono/html";
import { csrfField, layout } from "./layout.ts";

export interface MemoriesView {
  subjectType?: string;
  subjectId?: string;
  held?: readonly HeldMemory[];
  message?: string;
}

const day = (d: Date | string | null) => (d ? new Date(d).toISOString().slice(0, 10) : "");

function stateOf(m: HeldMemory): string {
  if (m.forgottenAt) return "forgotten";
  if (m.purgedAt) return "purged";
  return new Date(m.expiresAt).getTime() <= Date.now() ? "expired" : "live";
}

/**
 * Subject access (everything held about a subject) and erasure. Both forms are POSTed: a
 * subject's name never travels in a URL (SPEC §8).
 */
export function memoriesPage(view: MemoriesView, csrf: string) {
  const erasable = view.held?.filter((m) => m.body !== null).length ?? 0;
  const results = view.held
    ? html`<h2>${view.held.length} memories held about ${view.subjectType} “${view.subjectId}”</h2>
        <table>
          <thead><tr><th>State</th><th>Memory</th><th>Kind · origin</th><th>Written</th><th>Expires</th><th>Erased</th></tr></thead>
          <tbody>
            ${view.held.map(
              (m) => html`<tr data-state="${stateOf(m)}">
                <td>${stateOf(m)}</td>
                <td class="answer">${m.body ?? html`<span class="muted">— body erased —</span>`}</td>
                <td>${m.kind} · ${m.origin}</td>
                <td>${day(m.createdAt)} <span class="muted">${m.runId}</span></td>
                <td>${day(m.expiresAt)}</td>
                <td>${day(m.forgottenAt ?? m.purgedAt)}</td>
              </tr>`,
            )}
          </tbody>
        </table>
        ${
          erasable > 0
            ? html`<form method="post" action="/admin/memories/forget"
                  data-confirm="Erase the ${erasable} memories held about ${view.subjectType} “${view.subjectId}”? Their bodies are removed for good.">
                ${csrfField(csrf)}
                <input type="hidden" name="subject_type" value="${view.subjectType}" />
                <input type="hidden" name="subject_id" value="${view.subjectId}" />
                <button type="submit">Erase everything held about this subject</button>
              </form>`
            : ""
        }`
    : "";
  return layout(
    "Memories",
    html`${view.message ? html`<p class="notice" role="status">${view.message}</p>` : ""}
      <form method="post" action="/admin/memories" data-search>
        ${csrfField(csrf)}
        <label>Subject type <input name="subject_type" value="${view.subjectType ?? ""}" placeholder="client" required /></label>
        <label>Subject <input name="subject_id" value="${view.subjectId ?? ""}" placeholder="Acme SAS" required /></label>
        <button type="submit">Show what is held</button>
      </form>
      ${results}`,
    { section: "memories", csrf },
  );
}
