import type { AdminProfileEntry } from "@north/db";
import { html } from "hono/html";
import { layout, type Nav } from "./layout.ts";

const SOURCE_LABEL = {
  recorded: "as asked",
  bank: "bank wording",
  legacy_label: "not recorded",
} as const;

/** Every member's working profile, grouped by member, with no row limit. */
export function profilesPage(entries: readonly AdminProfileEntry[], csrf: string) {
  const byMember = new Map<string, AdminProfileEntry[]>();
  for (const entry of entries) {
    const list = byMember.get(entry.ownerEmail) ?? [];
    list.push(entry);
    byMember.set(entry.ownerEmail, list);
  }
  const sections = [...byMember.entries()].map(
    ([email, rows]) => html`<section>
      <h2>${email} <span class="muted">(${rows.length} answers)</span></h2>
      <table>
        <thead><tr><th>Question</th><th>Answer</th><th>Version</th><th>Updated</th></tr></thead>
        <tbody>
          ${rows.map(
            (r) => html`<tr data-question-id="${r.questionId}">
              <td>${r.question} <span class="tag">${SOURCE_LABEL[r.questionSource]}</span></td>
              <td class="answer">${r.answer}</td>
              <td>${r.answerVersion}</td>
              <td><time datetime="${r.updatedAt.toISOString()}">${r.updatedAt.toISOString().replace("T", " ").slice(0, 16)} UTC</time></td>
            </tr>`,
          )}
        </tbody>
      </table>
    </section>`,
  );
  return layout(
    "Working profiles",
    html`<p class="notice">Each answer is the assistant's transcription of what the lawyer said
        in conversation, not the lawyer's own writing. Questions show the wording actually asked,
        or, for older rows, the bank wording or a label.</p>
      ${entries.length ? sections : html`<p class="muted">No answers saved yet.</p>`}`,
    { section: "profiles", csrf } satisfies Nav,
  );
}
