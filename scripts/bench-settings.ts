/**
 * The benchmarks' numeric settings from the environment, read one way: a value that is not a
 * number in its range is refused, naming the variable, rather than read as NaN (which would
 * run no calls, or no rounds, and print a ratio of nothing).
 */

interface Range {
  min: number;
  integer?: boolean;
}

/** `text` as a number in `range`; anything else refuses the setting `name`. */
function numberIn(name: string, text: string, range: Range): number {
  const value = Number(text);
  const fits =
    text.trim() !== "" &&
    Number.isFinite(value) &&
    value >= range.min &&
    (!range.integer || Number.isInteger(value));
  if (!fits) {
    const kind = range.integer ? "a whole number" : "a number";
    throw new Error(
      `${name} must be ${kind} of at least ${range.min}, not ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** The setting `name`'s text, or undefined when it is unset or empty. */
function settingText(name: string): string | undefined {
  const raw = process.env[name];
  return raw === undefined || raw.trim() === "" ? undefined : raw;
}

/** The setting `name`, or `fallback` when it is unset or empty. */
export function benchNumber(name: string, fallback: number, range: Range): number {
  const raw = settingText(name);
  return raw === undefined ? fallback : numberIn(name, raw, range);
}

/** A comma-separated list of such numbers (`BENCH_SCALE_SIZES`), each refused as above. */
export function benchNumbers(name: string, fallback: readonly number[], range: Range): number[] {
  const raw = settingText(name);
  return raw === undefined
    ? [...fallback]
    : raw.split(",").map((item) => numberIn(name, item, range));
}
