/**
 * Mutating and restoring product files for scripts/try-mutations.ts, with a journal in .tmp/
 * that survives a SIGKILL: every exit path puts the files back and checks them byte for byte.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Edit } from "../test/support/catalogue.ts";
import { locate } from "./mutation-anchor.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const WORK = path.join(ROOT, ".tmp", "try-mutations");
const JOURNAL = path.join(WORK, "journal.json");

interface Mutated {
  file: string;
  original: Buffer;
  mutated: Buffer;
}

/** Files currently holding a mutation; restored by every exit path. */
let mutated: Mutated[] = [];

function writeJournal() {
  mkdirSync(WORK, { recursive: true });
  const entries = mutated.map((m) => ({
    file: m.file,
    original: m.original.toString("base64"),
    mutated: m.mutated.toString("base64"),
  }));
  writeFileSync(JOURNAL, JSON.stringify(entries));
}

/** Puts every mutated file back and checks it byte for byte; throws if one does not match. */
export function restoreAll(): void {
  const problems: string[] = [];
  for (const m of mutated) {
    const absolute = path.join(ROOT, m.file);
    writeFileSync(absolute, m.original);
    if (!readFileSync(absolute).equals(m.original)) problems.push(m.file);
  }
  mutated = [];
  if (problems.length > 0) {
    throw new Error(`restored content differs from the original in ${problems.join(", ")}`);
  }
  rmSync(JOURNAL, { force: true });
}

/** After a SIGKILL: puts back what the journal holds, if the files still hold the mutation. */
export function recoverFromJournal(): void {
  if (!existsSync(JOURNAL)) return;
  const entries = JSON.parse(readFileSync(JOURNAL, "utf8")) as {
    file: string;
    original: string;
    mutated: string;
  }[];
  for (const entry of entries) {
    const absolute = path.join(ROOT, entry.file);
    const current = readFileSync(absolute);
    const original = Buffer.from(entry.original, "base64");
    if (current.equals(original)) continue;
    if (!current.equals(Buffer.from(entry.mutated, "base64"))) {
      process.stderr.write(
        `${entry.file} holds neither its original nor the mutation an interrupted run left in ${path.relative(ROOT, JOURNAL)}; fix it by hand, then delete the journal.\n`,
      );
      process.exit(2);
    }
    writeFileSync(absolute, original);
    process.stdout.write(`restored ${entry.file}, left mutated by an interrupted run\n`);
  }
  rmSync(JOURNAL, { force: true });
}

/**
 * The files an entry's edits produce, applied in order in memory, or the reason the catalogue is
 * wrong: a `find` missing or ambiguous (mutation-anchor.ts says where it looks), or a
 * replacement that changes nothing.
 */
export function planEdits(edits: readonly Edit[]): Mutated[] | string {
  const contents = new Map<string, { original: Buffer; text: string }>();
  const read = (file: string) => {
    let state = contents.get(file);
    if (!state) {
      const original = readFileSync(path.join(ROOT, file));
      state = { original, text: original.toString("utf8") };
      contents.set(file, state);
    }
    return state.text;
  };
  const touched = new Set<string>();
  for (const edit of edits) {
    const at = locate(ROOT, edit, read);
    if (typeof at === "string") return at;
    const state = contents.get(at.file);
    if (!state) return `${at.file} was not read`;
    if (state.text.slice(at.start, at.end) === edit.replace) {
      return `find and replace are identical in ${at.file}`;
    }
    state.text = state.text.slice(0, at.start) + edit.replace + state.text.slice(at.end);
    touched.add(at.file);
  }
  return [...touched].map((file) => {
    const state = contents.get(file) as { original: Buffer; text: string };
    return { file, original: state.original, mutated: Buffer.from(state.text, "utf8") };
  });
}

/** Where an edit applies, as the report shows it: its file, and the declaration it is anchored in. */
export function placeOf(edit: Edit): string {
  const at = locate(ROOT, edit, (file) => readFileSync(path.join(ROOT, file), "utf8"));
  const file = typeof at === "string" ? (edit.file ?? "?") : at.file;
  return edit.in ? `${file} (${edit.in})` : file;
}

/** Writes an entry's edits (journal first); returns the catalogue problem instead, if any. */
export function applyEdits(edits: readonly Edit[]): string | undefined {
  const plan = planEdits(edits);
  if (typeof plan === "string") return plan;
  mutated = plan;
  writeJournal();
  for (const m of mutated) writeFileSync(path.join(ROOT, m.file), m.mutated);
  return undefined;
}

/** Whether a file holds a mutation now. */
export const holdsMutation = () => mutated.length > 0;
