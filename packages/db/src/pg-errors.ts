/**
 * SQLSTATE of a credential that no longer yields the principal a transaction was planned for
 * (`enter_as_api_token`, decision 036): a class of North's own, so no PostgreSQL error is ever
 * read as one.
 */
export const CREDENTIAL_REFUSED_SQLSTATE = "NA401";

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
 * The credential a tenant transaction was opened with no longer yields its principal
 * (`enter_as_api_token`, decision 036): the transaction was aborted before its work ran.
 */
export function isCredentialRefused(error: unknown): boolean {
  return hasSqlState(error, CREDENTIAL_REFUSED_SQLSTATE);
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

/**
 * Codes that mean "PostgreSQL could not be reached or went away", not "this statement failed":
 * the socket's errors, postgres.js's own connection codes, SQLSTATE class 08 (connection
 * exception), 57P01–57P03 (shutting down, crashed, still starting) and 53300 (no connection
 * slot left). A call that fails with one of them rolled back (or, in the rare case where the
 * connection dropped after COMMIT, committed without its answer arriving); North's writes are
 * idempotent or version-checked, so sending the same call again is safe.
 */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);

/**
 * Whether an error (or any error in its `cause` chain) means the database is unavailable rather
 * than that the statement was wrong: the caller gets a retryable refusal, not an internal error.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || code.startsWith("08"))) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
