import type { HeldSubject, MemoryReview, ReviewedMemory, UnsubjectedSummary } from "@north/db";
import { html } from "hono/html";
import { csrfField, layout } from "./layout.ts";

/**
 * Memories (SPEC §8): the subjects held, subject access and erasure. Every form is POSTed, so a
 * subject's name never travels in a URL; erasure always passes through a confirmation page that
 * names the subject and the count.
 */

/** What a memory page is about: a subject (of one type, or of every type), one memory, or none. */
export type MemoryTarget =
  | { kind: "subject"; type?: string; id: string }
  | { kind: "memory"; memoryId: string }
  | { kind: "none" };

export interface Notice {
  tone: "success" | "error" | "info";
  text: string;
}

const nav = (csrf: string) => ({ section: "memories" as const, csrf });

const noticeOf = (n?: Notice) => {
  if (!n) return "";
  if (n.tone === "error") return html`<p class="notice error" role="alert">${n.text}</p>`;
  return html`<p class="notice${n.tone === "success" ? " success" : ""}" role="status">${n.text}</p>`;
};

const dateTime = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "short",
  timeZone: "UTC",
});
const dateOnly = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeZone: "UTC" });
/** "12 Mar 2025, 14:03 UTC". */
export const when = (d: Date | string) => `${dateTime.format(new Date(d))} UTC`;
export const day = (d: Date | string) => dateOnly.format(new Date(d));

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
export const memoriesCount = (n: number) => plural(n, "memory", "memories");

const ORIGIN = { stated: "Stated by the lawyer", inferred: "Inferred by the assistant" } as const;
const KIND = { fact: "Fact", observation: "Observation" } as const;

/**
 * A run id in words: `stdio:`/`mcp:` are an assistant's session, `request:` one HTTP request
 * (the server is stateless), `conversation:` the id the caller gave (apps/mcp-server).
 */
export function runLabel(runId: string): { label: string; ref: string } {
  const colon = runId.indexOf(":");
  const prefix = colon < 0 ? "" : runId.slice(0, colon);
  const rest = runId.slice(colon + 1);
  if (prefix === "stdio" || prefix === "mcp")
    return { label: "Claude session", ref: rest.slice(0, 8) };
  if (prefix === "request") return { label: "Claude request", ref: rest.slice(0, 8) };
  if (prefix === "conversation") return { label: "Conversation", ref: rest };
  return { label: "Run", ref: runId };
}

/** The subject a page is about, in words: `client “Dupont”`, or every type. */
export const subjectName = (t: { type?: string; id: string }) =>
  t.type ? html`${t.type} “${t.id}”` : html`“${t.id}” <span class="muted">(every type)</span>`;

/** The hidden fields that carry a target from one POST to the next. */
export function targetFields(target: MemoryTarget) {
  if (target.kind === "memory") {
    return html`<input type="hidden" name="target" value="memory" />
      <input type="hidden" name="memory_id" value="${target.memoryId}" />`;
  }
  if (target.kind === "none") return html`<input type="hidden" name="target" value="none" />`;
  return html`<input type="hidden" name="target" value="subject" />
    ${target.type ? html`<input type="hidden" name="subject_type" value="${target.type}" />` : ""}
    <input type="hidden" name="subject_id" value="${target.id}" />`;
}

const searchForm = (csrf: string, subjects: readonly HeldSubject[], typed?: MemoryTarget) => {
  const types = [...new Set(subjects.map((s) => s.subjectType))].sort();
  const subject = typed?.kind === "subject" ? typed : undefined;
  return html`<form method="post" action="/admin/memories" class="filters" data-search>
      ${csrfField(csrf)}
      <label>Subject type (optional)
        <input name="subject_type" list="subject-types" value="${subject?.type ?? ""}"
          placeholder="any type" maxlength="32" autocomplete="off" /></label>
      <datalist id="subject-types">${types.map((t) => html`<option value="${t}"></option>`)}</datalist>
      <label>Subject <input name="subject_id" value="${subject?.id ?? ""}" placeholder="Hélène Dubois"
        required maxlength="200" autocomplete="off" /></label>
      <button type="submit">Search</button>
    </form>
    <p class="muted">Matching ignores case, accents and spacing: “helene  DUBOIS” finds “Hélène Dubois”.</p>`;
};

export interface MemoriesView {
  subjects: readonly HeldSubject[];
  unsubjected: UnsubjectedSummary;
  notice?: Notice;
  /** What the manager typed, kept in the search form after a search that found nothing. */
  typed?: MemoryTarget;
}

/** The section's front page: search, every subject held, and the memories without a subject. */
export function memoriesPage(view: MemoriesView, csrf: string) {
  const { subjects, unsubjected } = view;
  const subjectRows = subjects.map(
    (s) => html`<tr data-subject-type="${s.subjectType}">
      <td data-label="Type">${s.subjectType}</td>
      <td data-label="Subject">${s.subjectId}</td>
      <td data-label="Live memories">${s.live}${
        s.expired > 0
          ? html` <span class="muted">(+ ${s.expired} expired, awaiting purge)</span>`
          : ""
      }</td>
      <td data-label="Newest">${day(s.newest)}</td>
      <td data-label="Review"><form method="post" action="/admin/memories" class="inline">
        ${csrfField(csrf)}${targetFields({ kind: "subject", type: s.subjectType, id: s.subjectId })}
        <button type="submit" class="secondary" aria-label="Review ${s.subjectType} ${s.subjectId}">Review</button>
      </form></td>
    </tr>`,
  );
  const held = unsubjected.live + unsubjected.expired;
  return layout(
    "Memories",
    html`${noticeOf(view.notice)}
      <h2 id="search">Find a subject</h2>
      ${searchForm(csrf, subjects, view.typed)}
      <h2 id="subjects">Subjects held</h2>
      <p class="muted">${plural(subjects.length, "subject")} with memories still held, newest first.
        <a href="/admin/memories/export.json" download>Download everything held (JSON)</a></p>
      ${
        subjects.length === 0
          ? html`<p>No memory about a subject is held.</p>`
          : html`<div class="table-wrap"><table data-subjects>
              <thead><tr><th>Type</th><th>Subject</th><th>Live memories</th><th>Newest</th><th>Review</th></tr></thead>
              <tbody>${subjectRows}</tbody>
            </table></div>`
      }
      <h2 id="without-subject">Memories without a subject</h2>
      <p data-unsubjected>${plural(unsubjected.live, "live memory", "live memories")}${
        unsubjected.expired > 0 ? ` (+ ${unsubjected.expired} expired, awaiting purge)` : ""
      }, ${plural(unsubjected.tombstones, "tombstone")}: facts the assistant saved about no one in particular.</p>
      ${
        held + unsubjected.tombstones > 0
          ? html`<form method="post" action="/admin/memories/without-subject">
              ${csrfField(csrf)}<button type="submit" class="secondary">Review memories without a subject</button>
            </form>`
          : ""
      }`,
    nav(csrf),
  );
}

function stateCell(m: ReviewedMemory) {
  if (m.state === "forgotten" && m.forgottenAt) {
    return html`<span class="tag erased">Erased</span> on ${when(m.forgottenAt)}${
      m.forgottenByEmail ? html` by ${m.forgottenByEmail}` : ""
    }, body removed`;
  }
  if (m.state === "purged") {
    return html`<span class="tag erased">Expired</span> on ${day(m.expiresAt)}, body purged`;
  }
  if (m.state === "superseded") {
    return html`<span class="tag">Superseded</span> by a newer memory; no longer recalled`;
  }
  if (m.state === "expired") {
    return html`<span class="tag">Expired</span> on ${day(m.expiresAt)}; body held until the purge`;
  }
  return html`<span class="tag live">Live</span> until ${day(m.expiresAt)}`;
}

function memoryRow(m: ReviewedMemory, csrf: string) {
  const run = runLabel(m.runId);
  return html`<tr data-memory-id="${m.id}" data-state="${m.state}">
    <td data-label="State">${stateCell(m)}</td>
    <td data-label="Kind">${KIND[m.kind]}${m.subjectType ? html` <span class="tag">${m.subjectType}</span>` : ""}</td>
    <td data-label="Memory" class="body">${m.body ?? html`<span class="muted">— body removed —</span>`}</td>
    <td data-label="Origin">${ORIGIN[m.origin]}</td>
    <td data-label="Author">${m.authorEmail ?? html`<span class="muted">unknown member</span>`}</td>
    <td data-label="Written">${when(m.createdAt)}</td>
    <td data-label="Run">${run.label} <code class="muted">${run.ref}</code></td>
    <td data-label="Erase">${
      m.body === null
        ? ""
        : html`<form method="post" action="/admin/memories/confirm" class="inline">
            ${csrfField(csrf)}${targetFields({ kind: "memory", memoryId: m.id })}
            <button type="submit" class="danger" aria-label="Erase the ${KIND[m.kind].toLowerCase()} written ${when(m.createdAt)}">Erase…</button>
          </form>`
    }</td>
  </tr>`;
}

export interface ReviewView {
  target: Extract<MemoryTarget, { kind: "subject" } | { kind: "none" }>;
  review: MemoryReview;
}

/** Everything held about a subject, or without one: live memories, expired ones and tombstones. */
export function reviewPage(view: ReviewView, csrf: string) {
  const { target, review } = view;
  const about =
    target.kind === "subject" ? html`about ${subjectName(target)}` : html`without a subject`;
  const tombstones = review.total - review.erasable;
  const shown = review.memories.length;
  return layout(
    "Memory review",
    html`<h2 data-review>Memories ${about}</h2>
      <p>${memoriesCount(review.total)} held: ${review.erasable} with their body,
        ${plural(tombstones, "tombstone")} (erased or purged: the row remains, the body is gone).</p>
      ${
        shown < review.total
          ? html`<p class="notice" role="status">Showing the newest ${shown}. The JSON download has all ${review.total}.</p>`
          : ""
      }
      <div class="actions">
        ${
          review.erasable > 0
            ? html`<form method="post" action="/admin/memories/confirm">
                ${csrfField(csrf)}${targetFields(target)}
                <button type="submit" class="danger" data-erase-all>Erase all ${review.erasable}…</button>
              </form>`
            : ""
        }
        <form method="post" action="/admin/memories/export.json">
          ${csrfField(csrf)}${targetFields(target)}
          <button type="submit" class="secondary">Download as JSON</button>
        </form>
        <a href="/admin/memories">Back to the subjects</a>
      </div>
      ${
        shown === 0
          ? html`<p>Nothing is held.</p>`
          : html`<div class="table-wrap"><table data-memories>
              <thead><tr><th>State</th><th>Kind</th><th>Memory</th><th>Origin</th><th>Author</th><th>Written</th><th>Run</th><th>Erase</th></tr></thead>
              <tbody>${review.memories.map((m) => memoryRow(m, csrf))}</tbody>
            </table></div>`
      }`,
    nav(csrf),
  );
}

export interface ConfirmView {
  target: MemoryTarget;
  /** What erasing the target would erase now. */
  count: number;
  /** For one memory: the memory itself. */
  memory?: ReviewedMemory;
}

/** The one step between "Erase…" and erasure: it names what goes, and how many. */
export function confirmPage(view: ConfirmView, csrf: string) {
  const { target, count, memory } = view;
  const cancel =
    target.kind === "memory" && memory?.subjectType && memory.subjectId
      ? { kind: "subject" as const, type: memory.subjectType, id: memory.subjectId }
      : target.kind === "memory"
        ? { kind: "none" as const }
        : target;
  const cancelAction =
    cancel.kind === "none" ? "/admin/memories/without-subject" : "/admin/memories";
  const what =
    target.kind === "memory" && memory
      ? html`<p data-confirm-what>Erase this ${KIND[memory.kind].toLowerCase()}${
          memory.subjectType && memory.subjectId
            ? html` about ${memory.subjectType} “${memory.subjectId}”`
            : ""
        }, written ${when(memory.createdAt)} by ${memory.authorEmail ?? "an unknown member"}
          (${ORIGIN[memory.origin].toLowerCase()})?</p>
          <blockquote class="body">${memory.body}</blockquote>`
      : target.kind === "subject"
        ? html`<p data-confirm-what>Erase ${count === 1 ? "the" : "all"} ${memoriesCount(count)} held about ${subjectName(target)}?</p>`
        : html`<p data-confirm-what>Erase ${count === 1 ? "the" : "all"} ${memoriesCount(count)} held without a subject?</p>`;
  return layout(
    "Confirm erasure",
    count === 0
      ? html`<p class="notice" role="status">Nothing is left to erase here: it was already erased or purged.</p>
          <p><a href="/admin/memories">Back to the subjects</a></p>`
      : html`${what}
          <p>The ${count === 1 ? "body is" : "bodies are"} removed for good. Each row stays as a tombstone
            recording that you erased it, and when. This cannot be undone.</p>
          <div class="actions">
            <form method="post" action="/admin/memories/forget">
              ${csrfField(csrf)}${targetFields(target)}
              <button type="submit" class="danger">Yes, erase ${memoriesCount(count)}</button>
            </form>
            <form method="post" action="${cancelAction}">
              ${csrfField(csrf)}${cancel.kind === "subject" ? targetFields(cancel) : ""}
              <button type="submit" class="secondary">Cancel</button>
            </form>
          </div>`,
    nav(csrf),
  );
}
