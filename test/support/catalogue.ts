/**
 * The shape of the acceptance-mutation catalogue: plain data, one file beside each suite
 * (`<suite>.catalogue.ts`, or a suite folder's `catalogue/`), gathered by
 * scripts/acceptance-mutations.ts and tried by scripts/try-mutations.ts (docs/acceptance.md).
 *
 * - `check.name` is the test's full name as vitest reports it: describe titles and the test
 *   title joined by spaces; for an `it.each`, one of its cases (the one the mutation targets).
 * - `find` must occur exactly once where the edit is anchored (checked before every try): inside
 *   the declaration `in` (a function, const, class or type, wherever it lives), in `file`, or
 *   anywhere in the product when neither is given. Its whitespace may differ from the code's
 *   (scripts/mutation-anchor.ts), so formatting never breaks an entry; when code changes, the
 *   entry fails loudly until it is updated.
 * - `also` holds further edits of the same change, for checks that pin two layers at once
 *   (a grant and a policy, a schema and a handler): breaking one layer alone leaves them green.
 * - Product code only: apps/, packages/, the migrations in drizzle/ and what North ships to
 *   hosts (plugins/, .claude-plugin/, manifest.json) — never a test.
 */

export interface Check {
  /** Test file, from the repository root. */
  file: string;
  /** Full test name: describe titles + test title, space-separated, exactly as vitest reports. */
  name: string;
}

export interface Edit {
  /** Product file, from the repository root; absent: wherever in the product `find` is. */
  file?: string;
  /**
   * The declaration (function, const, class, type) whose text holds `find`, wherever it lives:
   * the anchor that survives moving code between files.
   */
  in?: string;
  /**
   * The text to change, matched exactly or with its whitespace laid out otherwise; must occur
   * exactly once where the edit is anchored (scripts/mutation-anchor.ts).
   */
  find: string;
  replace: string;
}

export interface Mutation extends Edit {
  /** One line: what the careless change is. */
  why: string;
  /** Further edits belonging to the same change. */
  also?: readonly Edit[];
}

export interface Entry {
  check: Check;
  mutation: Mutation;
}

/** A check no sensible product mutation turns red, and why (a weak test: say so). */
export interface NoMutation {
  check: Check;
  reason: string;
}
