/**
 * Where a catalogue edit applies (scripts/acceptance-mutations.ts): its `find`, inside the named
 * declaration `in` when it gives one, in its `file` when it gives one, else anywhere in North's
 * product code. It must match exactly once. A `find` is tried as written first, then with every
 * run of whitespace in it matching any run of whitespace, so reformatting the code never breaks
 * an entry, and moving a declaration to another file breaks none that name it with `in`.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

export interface Anchor {
  /** Product file, from the repository root; absent: any file of the product. */
  file?: string;
  /** A declaration (function, const, class, interface, type) whose text holds `find`. */
  in?: string;
  /** The text to change: exact, or the same with its whitespace laid out otherwise. */
  find: string;
}

export interface Located {
  file: string;
  start: number;
  end: number;
}

/** What the catalogue may change: North's own code and what it ships, never a test. */
const PRODUCT_ROOTS = ["apps", "packages", "drizzle", "plugins", ".claude-plugin", "manifest.json"];
const SOURCE = /\.(ts|mjs|js|sql|json|md)$/;
const NOT_PRODUCT = /(\.test\.ts|\.catalogue\.ts)$|(^|\/)(node_modules|test|dist)\//;

let productFiles: string[] | undefined;

/** Every product file, from the repository root. */
export function listProductFiles(root: string): string[] {
  if (productFiles) return productFiles;
  const found: string[] = [];
  const walk = (relative: string) => {
    const absolute = path.join(root, relative);
    if (!existsSync(absolute)) return;
    if (statSync(absolute).isFile()) {
      if (SOURCE.test(relative) && !NOT_PRODUCT.test(relative)) found.push(relative);
      return;
    }
    for (const name of readdirSync(absolute)) {
      if (name === "node_modules" || name === "dist") continue;
      walk(path.join(relative, name));
    }
  };
  for (const start of PRODUCT_ROOTS) walk(start);
  productFiles = found;
  return found;
}

const DECLARATION = (name: string) =>
  new RegExp(
    `^([ \\t]*)(?:export\\s+)?(?:default\\s+)?(?:async\\s+)?(?:function\\*?|const|let|class|interface|type|enum)\\s+${name}\\b`,
    "gm",
  );

/**
 * The text of each declaration of `name` in `text`: from its line to the line that closes it at
 * its own indentation (`}`, `})`, `]`…), or to the line before the next statement there.
 */
export function declarationSpans(text: string, name: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const match of text.matchAll(DECLARATION(name))) {
    const indent = match[1]?.length ?? 0;
    const start = match.index ?? 0;
    let at = text.indexOf("\n", start);
    let end = at === -1 ? text.length : at;
    while (at !== -1) {
      const next = text.indexOf("\n", at + 1);
      const line = text.slice(at + 1, next === -1 ? text.length : next);
      const lineIndent = line.length - line.trimStart().length;
      if (line.trim() !== "" && lineIndent <= indent) {
        const closing = line.trimStart();
        // A signature's `): T {` goes on; `}` or `]` (with what follows) closes the declaration.
        if (lineIndent === indent && closing.startsWith(")")) {
          end = next === -1 ? text.length : next;
          at = next;
          continue;
        }
        if (lineIndent === indent && /^[}\]]/.test(closing)) end = next === -1 ? text.length : next;
        break;
      }
      end = next === -1 ? text.length : next;
      at = next;
    }
    spans.push([start, end]);
  }
  return spans;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `find` as a pattern whose whitespace runs match any whitespace run (its ends trimmed). */
function loosely(find: string): RegExp {
  const parts = find.trim().split(/\s+/).map(escapeRegExp);
  return new RegExp(parts.join("\\s+"), "g");
}

function occurrences(
  text: string,
  find: string,
  from: number,
  to: number,
): Array<[number, number]> {
  const slice = text.slice(from, to);
  const exact: Array<[number, number]> = [];
  for (let at = slice.indexOf(find); at !== -1; at = slice.indexOf(find, at + 1)) {
    exact.push([from + at, from + at + find.length]);
  }
  if (exact.length > 0 || find.trim() === "") return exact;
  return [...slice.matchAll(loosely(find))].map((m) => [
    from + (m.index ?? 0),
    from + (m.index ?? 0) + m[0].length,
  ]);
}

/** Where `anchor` applies, or why it does not apply exactly once. */
export function locate(
  root: string,
  anchor: Anchor,
  read: (file: string) => string,
): Located | string {
  const files = anchor.file ? [anchor.file] : listProductFiles(root);
  if (anchor.file && !existsSync(path.join(root, anchor.file)))
    return `${anchor.file} does not exist`;
  const where = `${anchor.in ? `${anchor.in} in ` : ""}${anchor.file ?? "the product"}`;
  const found: Located[] = [];
  let declarations = 0;
  for (const file of files) {
    const text = read(file);
    const spans: Array<[number, number]> = anchor.in
      ? declarationSpans(text, anchor.in)
      : [[0, text.length]];
    declarations += spans.length;
    for (const [from, to] of spans) {
      for (const [start, end] of occurrences(text, anchor.find, from, to)) {
        found.push({ file, start, end });
      }
    }
  }
  if (anchor.in && declarations !== 1) {
    return `${anchor.in} is declared ${declarations} times in ${anchor.file ?? "the product"} (must be exactly once)`;
  }
  if (found.length !== 1)
    return `find occurs ${found.length} times in ${where} (must be exactly once)`;
  return found[0] as Located;
}
