/** Whether an error (or any error in its `cause` chain, as Drizzle wraps them) has this SQLSTATE. */
export function hasSqlState(error: unknown, code: string): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    if ((current as { code?: unknown }).code === code) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * What of an error may be logged: class names, SQLSTATEs, constraint and routine names along
 * the cause chain. Never a message or a stack: Drizzle's carry the query and its parameters
 * (subject names, memory bodies), PostgreSQL's can quote values, and a library's may quote its
 * input. Shared by the MCP server's and the console's logs.
 */
export function describeError(error: unknown, depth = 0): Record<string, unknown> {
  if (!(error instanceof Error)) return { errorType: typeof error };
  const fields = error as Error & { code?: unknown; constraint_name?: unknown; routine?: unknown };
  const cause = (error as { cause?: unknown }).cause;
  return {
    errorType: error.name,
    code: typeof fields.code === "string" ? fields.code : undefined,
    constraint: typeof fields.constraint_name === "string" ? fields.constraint_name : undefined,
    routine: typeof fields.routine === "string" ? fields.routine : undefined,
    cause: cause !== undefined && depth < 3 ? describeError(cause, depth + 1) : undefined,
  };
}
