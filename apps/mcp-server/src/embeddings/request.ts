import type { EmbedderFailureClass } from "../tool-definition.ts";

/**
 * One call to an OpenAI-compatible embeddings endpoint, and its answer sorted into vectors or
 * a named failure class (SPEC §5). No exception leaves this file: every outcome is a value.
 */

export type EmbedResult =
  | { ok: true; vectors: number[][] }
  | {
      ok: false;
      class: EmbedderFailureClass;
      /** How long to wait before the next call: the provider's Retry-After, or the breaker's. */
      retryAfterMs?: number;
      /** What went wrong in North's own words, for logs: never a body, a header or the key. */
      reason: string;
    };

export type EmbedFailure = Extract<EmbedResult, { ok: false }>;

export interface EmbeddingsRequest {
  endpoint: URL;
  model: string;
  apiKey?: string;
  timeoutMs: number;
  /** Every vector must have this length, once the first answer has set it. */
  dimensions?: number;
  fetch: typeof fetch;
  /** Epoch milliseconds, to turn a Retry-After HTTP-date into a wait. */
  now: () => number;
}

const fail = (
  failureClass: EmbedderFailureClass,
  reason: string,
  retryAfterMs?: number,
): EmbedFailure =>
  retryAfterMs === undefined
    ? { ok: false, class: failureClass, reason }
    : { ok: false, class: failureClass, reason, retryAfterMs };

/**
 * `<base>/embeddings` for a base URL such as `https://api.openai.com/v1` (the OpenAI SDKs'
 * `baseURL`); a URL that already ends in `/embeddings` is used as it is. A query string (Azure's
 * `api-version`) is kept.
 */
export function embeddingsEndpoint(base: string): URL {
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith("/embeddings") ? path : `${path}/embeddings`;
  return url;
}

/**
 * Milliseconds to wait from a `Retry-After` header (delay-seconds or HTTP-date, RFC 9110
 * §10.2.3), or from `retry-after-ms` (Azure OpenAI, OpenAI); undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  // Every HTTP-date form starts with the day's name; Date.parse alone would read "-3" as a year.
  const date = /^[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The failure class of a non-2xx answer. */
export function classifyStatus(status: number, headers: Headers, now: number): EmbedFailure {
  if (status === 429) return fail("rate_limited", "HTTP 429", retryAfterMs(headers, now));
  if (status === 401 || status === 403) return fail("credential_refused", `HTTP ${status}`);
  // A 503 may say when to come back too (RFC 9110 §10.2.3).
  if (status >= 500) return fail("unreachable", `HTTP ${status}`, retryAfterMs(headers, now));
  // Other 4xx, and redirects (North does not follow them with the key): the request or the
  // configured URL is wrong, and sending it again will not help.
  return fail("rejected", `HTTP ${status}`);
}

/** The error's code (ECONNREFUSED, ENOTFOUND…) without its message, which may name the URL. */
function errorCode(error: unknown): string {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.name : typeof error;
}

/**
 * Checks an answer's shape (`{ data: [{ embedding, index }] }`): one vector per input, each
 * index once, every value a finite number, every vector the same length, and that length the
 * learned one when there is one.
 */
export function readAnswer(text: string, inputs: number, dimensions?: number): EmbedResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return fail("rejected", "the answer is not JSON");
  }
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return fail("rejected", "the answer has no data array");
  if (data.length !== inputs) {
    return fail("rejected", `the answer has ${data.length} vectors for ${inputs} inputs`);
  }
  const vectors: number[][] = new Array(inputs);
  let expected = dimensions;
  for (const [position, item] of data.entries()) {
    const { embedding, index = position } = (item ?? {}) as {
      embedding?: unknown;
      index?: unknown;
    };
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= inputs) {
      return fail("rejected", "the answer's indexes do not match the inputs");
    }
    if (vectors[index]) return fail("rejected", "the answer repeats an index");
    if (!Array.isArray(embedding) || embedding.length === 0) {
      return fail("rejected", "an embedding is not an array of numbers");
    }
    if (!embedding.every((v) => typeof v === "number" && Number.isFinite(v))) {
      return fail("rejected", "an embedding holds a value that is not a finite number");
    }
    expected ??= embedding.length;
    if (embedding.length !== expected) {
      return fail("rejected", `an embedding has ${embedding.length} dimensions, not ${expected}`);
    }
    vectors[index] = embedding as number[];
  }
  return { ok: true, vectors };
}

/**
 * POSTs `{ model, input }` and sorts the outcome: 429 `rate_limited` (with the wait asked for),
 * 401/403 `credential_refused`, other 4xx and unreadable answers `rejected`, connection errors
 * and 5xx `unreachable`, and no complete answer within `timeoutMs` `timeout` (the request is
 * aborted).
 */
export async function requestEmbeddings(
  request: EmbeddingsRequest,
  texts: readonly string[],
): Promise<EmbedResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.timeoutMs);
  const lost = (error: unknown) =>
    controller.signal.aborted
      ? fail("timeout", `no answer within ${request.timeoutMs} ms`)
      : fail("unreachable", `connection failed (${errorCode(error)})`);
  try {
    let response: Response;
    try {
      response = await request.fetch(request.endpoint, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          ...(request.apiKey ? { Authorization: `Bearer ${request.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: request.model, input: texts }),
        signal: controller.signal,
        redirect: "manual",
      });
    } catch (error) {
      return lost(error);
    }
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => {});
      return classifyStatus(response.status, response.headers, request.now());
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      return lost(error);
    }
    return readAnswer(text, texts.length, request.dimensions);
  } finally {
    clearTimeout(timer);
  }
}
