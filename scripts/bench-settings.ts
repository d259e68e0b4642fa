/**
 * The benchmarks' numeric settings from the environment, read one way: a value that is not a
 * number in its range is refused, naming the variable, rather than read as NaN (which would
 * run no calls, or no rounds, and print a ratio of nothing).
 */

interface Range {
  min: number;
  integer?: boolean;
}

/** `text` as a number in `range`, or undefined. */
function numberIn(text: string, range: Range): number | undefined {
  const value = Number(text);
  const fits =
    text.trim() !== "" &&
    Number.isFinite(value) &&
    value >= range.min &&
    (!range.integer || Number.isInteger(value));
  return fits ? value : undefined;
}

/** The setting `name`, or `fallback` when it is unset or empty. */
export function benchNumber(name: string, fallback: number, range: Range): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = numberIn(raw, range);
  if (value === undefined) {
    throw new Error(
      `${name} must be ${range.integer ? "a whole number" : "a number"} of at least ${range.min}`,
    );
  }
  return value;
}

/** A comma-separated list of such numbers (`BENCH_SCALE_SIZES`), each refused as above. */
export function benchNumbers(name: string, fallback: readonly number[], range: Range): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return [...fallback];
  return raw.split(",").map((item) => {
    const value = numberIn(item, range);
    if (value === undefined) {
      throw new Error(
        `${name} must be comma-separated ${range.integer ? "whole numbers" : "numbers"} of at least ${range.min}`,
      );
    }
    return value;
  });
}
