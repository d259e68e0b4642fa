import type { AdminProfileEntry, MemberOverview, ProfileEntry } from "@north/db";
import { html } from "hono/html";
import { layout, type Nav } from "./layout.ts";
import { memberHref, utc } from "./members.ts";

const SOURCE_LABEL = {
  recorded: "as asked",
  bank: "bank wording",
  legacy_label: "not recorded",
} as const;

/** SPEC §8: rows are transcribed by the assistant, and the question shown may be a fallback. */
export const transcriptionNotice = html`<p class="notice">Each answer is the assistant's
    transcription of what the lawyer said in conversation, not the lawyer's own writing.
    Questions show the wording actually asked, or, for older rows, the bank wording or a label.</p>`;

export const profileJsonHref = (userId: string) => `/admin/members/${userId}/profile.json`;

/** The Question, Answer, Version and Updated cells of one answer. */
export const answerCells = (r: ProfileEntry) =>
  html`<td data-label="Question">${r.question} <span class="tag">${SOURCE_LABEL[r.questionSource]}</span></td>
    <td data-label="Answer" class="answer">${r.answer}</td>
    <td data-label="Version">${r.answerVersion}</td>
    <td data-label="Updated">${utc(r.updatedAt)}</td>`;

type Owner = Pick<MemberOverview, "userId" | "email" | "removedAt">;

function memberRows(owner: Owner, rows: readonly AdminProfileEntry[]) {
  const name = html`<a href="${memberHref(owner.userId)}">${owner.email}</a>${
    owner.removedAt ? html` <span class="tag erased">Removed</span>` : ""
  }`;
  if (rows.length === 0) {
    return html`<tr data-member-id="${owner.userId}" data-onboarded="false">
      <td data-label="Member">${name}</td>
      <td data-label="Working profile" colspan="4"><span class="tag">Not onboarded</span>
        <span class="muted">No answers saved yet.</span></td>
    </tr>`;
  }
  const download = html`<br /><a href="${profileJsonHref(owner.userId)}"
      aria-label="Download JSON: ${owner.email}">Download JSON</a>`;
  return rows.map(
    (r, i) => html`<tr data-member-id="${owner.userId}" data-question-id="${r.questionId}">
      <td data-label="Member">${name}${i === 0 ? download : ""}</td>
      ${answerCells(r)}
    </tr>`,
  );
}

/**
 * Every member's working profile in one table (Member, Question, Answer, Version, Updated), no
 * row limit; a member with no answers has a "Not onboarded" row, so nobody is left out.
 */
export function profilesPage(
  members: readonly MemberOverview[],
  entries: readonly AdminProfileEntry[],
  csrf: string,
) {
  const byOwner = new Map<string, AdminProfileEntry[]>();
  for (const entry of entries) {
    const list = byOwner.get(entry.ownerUserId) ?? [];
    list.push(entry);
    byOwner.set(entry.ownerUserId, list);
  }
  // An answer whose owner joined between the two reads still shows, under its email.
  const owners: Owner[] = [...members];
  const known = new Set(members.map((m) => m.userId));
  for (const [userId, rows] of byOwner) {
    if (!known.has(userId))
      owners.push({ userId, email: rows[0]?.ownerEmail ?? "", removedAt: null });
  }
  const waiting = members.filter((m) => m.answers === 0 && !m.removedAt).length;
  return layout(
    "Working profiles",
    html`${transcriptionNotice}
      <p>${entries.length} ${entries.length === 1 ? "answer" : "answers"} from ${owners.length}
        ${owners.length === 1 ? "member" : "members"}${waiting ? html`; ${waiting} not onboarded` : ""}.</p>
      <div class="table-wrap">
        <table>
          <thead><tr><th scope="col">Member</th><th scope="col">Question</th><th scope="col">Answer</th>
            <th scope="col">Version</th><th scope="col">Updated</th></tr></thead>
          <tbody>
            ${owners.map((o) => memberRows(o, byOwner.get(o.userId) ?? []))}
          </tbody>
        </table>
      </div>`,
    { section: "profiles", csrf } satisfies Nav,
  );
}
