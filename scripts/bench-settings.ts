/**
 * The benchmarks' numeric settings from the environment, read one way: a value that is not a
 * number in its range is refused, naming the variable, rather than read as NaN (which would
 * run no calls, or no rounds, and print a ratio of nothing).
 */
export function benchNumber(
  name: string,
  fallback: number,
  range: { min: number; integer?: boolean },
): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < range.min || (range.integer && !Number.isInteger(value))) {
    const kind = range.integer ? "a whole number" : "a number";
    throw new Error(`${name} must be ${kind} of at least ${range.min}`);
  }
  return value;
}
