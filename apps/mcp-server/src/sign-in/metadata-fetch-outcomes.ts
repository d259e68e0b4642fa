/**
 * What a metadata fetch (metadata-fetch.ts) refuses and why: each refusal is a
 * {@link MetadataFetchError} with a short message naming the reason, never the URL or any part of
 * the response, and a {@link MetadataFailureClass} the authorize route reads through
 * {@link observeMetadataFetches} to name the reason on its page and in its log line.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type MetadataFetchRefusal =
  | "invalid_url"
  | "invalid_request"
  | "not_https"
  | "credentials_in_url"
  | "method_not_allowed"
  | "request_body"
  | "dns_failure"
  | "special_address"
  | "redirect"
  | "unexpected_status"
  | "not_json"
  | "too_large"
  | "timeout"
  | "aborted"
  | "network";

const REASONS: Record<MetadataFetchRefusal, string> = {
  invalid_url: "metadata fetch refused: invalid URL",
  invalid_request: "metadata fetch refused: invalid request headers",
  not_https: "metadata fetch refused: only https URLs are fetched",
  credentials_in_url: "metadata fetch refused: URL carries credentials",
  method_not_allowed: "metadata fetch refused: only GET is allowed",
  request_body: "metadata fetch refused: a request body is not allowed",
  dns_failure: "metadata fetch refused: hostname did not resolve",
  special_address: "metadata fetch refused: host resolves to a non-public address",
  redirect: "metadata fetch refused: redirects are not followed",
  unexpected_status: "metadata fetch refused: unexpected response status",
  not_json: "metadata fetch refused: the answer is not JSON (a challenge or other web page)",
  too_large: "metadata fetch refused: response body exceeds the size cap",
  timeout: "metadata fetch refused: timed out",
  aborted: "metadata fetch refused: aborted by caller",
  network: "metadata fetch failed: connection or TLS error",
};

export class MetadataFetchError extends Error {
  override readonly name = "MetadataFetchError";
  readonly code: MetadataFetchRefusal;

  constructor(code: MetadataFetchRefusal) {
    super(REASONS[code]);
    this.code = code;
  }
}

/**
 * Why a metadata document could not be read, as North's page and log line name it: a reason
 * class, never the URL's path or any part of the answer. `invalid_document` (the answer was
 * read but the CIMD plugin refused it) is the authorize route's to name; the rest are noted here.
 */
export type MetadataFailureClass =
  | "network"
  | "timeout"
  | "size"
  | "status"
  | "challenge"
  | "invalid_document"
  | "refused";

const FAILURE_CLASS: Record<MetadataFetchRefusal, MetadataFailureClass> = {
  invalid_url: "refused",
  invalid_request: "refused",
  not_https: "refused",
  credentials_in_url: "refused",
  method_not_allowed: "refused",
  request_body: "refused",
  dns_failure: "network",
  special_address: "refused",
  redirect: "status",
  unexpected_status: "status",
  not_json: "challenge",
  too_large: "size",
  timeout: "timeout",
  // The CIMD plugin aborts the fetch at its own deadline.
  aborted: "timeout",
  network: "network",
};

/**
 * The failure class of one fetch's outcome: its refusal, or an error status (`challenge` when
 * the host answered with a web page — Cloudflare marks its challenges `cf-mitigated`), or
 * `null` for an answer the plugin may use.
 */
export function classifyMetadataFetch(outcome: unknown): MetadataFailureClass | null {
  if (outcome instanceof Response) {
    if (outcome.status < 400) return null;
    const challenge =
      outcome.headers.get("cf-mitigated") === "challenge" ||
      /^text\/html\b/i.test(outcome.headers.get("content-type") ?? "");
    return challenge ? "challenge" : "status";
  }
  return outcome instanceof MetadataFetchError ? FAILURE_CLASS[outcome.code] : "network";
}

/** What the metadata fetches made while handling one request noted. */
interface FetchNotes {
  fetched: number;
  failure: MetadataFailureClass | null;
  /** A pinned copy stood in for a document that could not be read (decision 032). */
  pinned: boolean;
}
const fetchNotes = new AsyncLocalStorage<FetchNotes>();

export function noteFetch(outcome: unknown): void {
  const notes = fetchNotes.getStore();
  if (!notes) return;
  notes.fetched += 1;
  notes.failure ??= classifyMetadataFetch(outcome);
}

/** Notes that North's pinned copy stood in for the document just refused (decision 032). */
export function notePinnedCopy(): void {
  const notes = fetchNotes.getStore();
  if (notes) notes.pinned = true;
}

/**
 * Runs `work` (a request handed to the library) and returns what it answered with the first
 * failure class its metadata fetches noted: `fetched` is false when it fetched nothing (the
 * plugin refused the URL itself, or answered from its cache). The plugin's own answer says
 * only `invalid_client`, so this is how the authorize route can say why.
 */
export async function observeMetadataFetches<T>(
  work: () => Promise<T>,
): Promise<{ result: T; fetched: boolean; failure: MetadataFailureClass | null; pinned: boolean }> {
  const notes: FetchNotes = { fetched: 0, failure: null, pinned: false };
  const result = await fetchNotes.run(notes, work);
  return { result, fetched: notes.fetched > 0, failure: notes.failure, pinned: notes.pinned };
}
