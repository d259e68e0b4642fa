import type { Logger } from "../logger.ts";
import type { MetadataFailureClass } from "./metadata-fetch.ts";
import { messagePage } from "./pages.ts";
import { SECURITY_HEADERS } from "./security-headers.ts";

/** What the authorize route knows once the library has answered. */
export interface AuthorizeOutcome {
  response: Response;
  clientId: string | null;
  requestId: string;
  /** From `observeMetadataFetches`: whether a metadata document was fetched, and how it failed. */
  fetched: boolean;
  failure: MetadataFailureClass | null;
  pinned: boolean;
}

/** What the page says about each failure class, after "North could not read … from HOST." */
const FAILURE_WORDS: Record<MetadataFailureClass, string> = {
  network: "North could not connect to it.",
  timeout: "It did not answer in time.",
  size: "What it sent is larger than an app registration can be.",
  status: "It answered with an error.",
  challenge: "It answered with a web page (such as a bot check) instead of the registration.",
  invalid_document: "What it sent is not a valid registration for this app.",
  refused: "North does not read app registrations from that address.",
};
/** Failures of the app's host rather than of the request: 502, like a gateway's. */
const HOST_FAILURES = new Set<MetadataFailureClass>(["network", "timeout", "status", "challenge"]);

const ERROR_WORDS: Record<string, string> = {
  invalid_client: "This app is not registered with North.",
  invalid_redirect: "This app asked to be sent back to an address it has not registered.",
  temporarily_unavailable: "North is busy reading app registrations.",
};

/** The https host of a metadata-document client id (never its path or query), else null. */
function documentHost(clientId: string | null): string | null {
  if (!clientId) return null;
  try {
    const url = new URL(clientId);
    return url.protocol === "https:" ? url.hostname : null;
  } catch {
    return null;
  }
}

/**
 * The library's OAuth error code in an answer that is an error but not a redirect to the client:
 * a JSON error body, or a redirect (a 3xx, or the `{ redirect: true, url }` it gives a fetch) to
 * its own error URL.
 */
async function libraryError(response: Response, errorPage: URL): Promise<string | null> {
  const json = /json/i.test(response.headers.get("content-type") ?? "")
    ? ((await response
        .clone()
        .json()
        .catch(() => null)) as { error?: unknown; redirect?: unknown; url?: unknown } | null)
    : null;
  const location =
    response.status >= 300 && response.status < 400
      ? response.headers.get("location")
      : json?.redirect === true && typeof json.url === "string"
        ? json.url
        : null;
  if (location) {
    const target = new URL(location, errorPage);
    if (target.origin !== errorPage.origin || target.pathname !== errorPage.pathname) return null;
    return errorCode(target.searchParams.get("error"));
  }
  if (response.status < 400 || !json) return null;
  return errorCode(json.error);
}

/** An OAuth error code as logged: its RFC 6749 shape only, so a log line never carries more. */
const errorCode = (value: unknown): string =>
  typeof value === "string" && /^[a-z_]{1,64}$/.test(value) ? value : "server_error";

/**
 * The browser's answer at the end of GET /oauth2/authorize. The library answers some errors with
 * a raw JSON body (a metadata document it could not use) or a redirect to its own error URL,
 * which North does not serve: those become North's page, in words; a metadata document that
 * could not be read is also logged with its reason class and host (there is no organisation yet,
 * so the log line is the record, not the audit ledger). Everything else — the sign-in page, the
 * code, an error redirect to the client — passes through unchanged.
 */
export async function authorizeAnswer(
  outcome: AuthorizeOutcome,
  deps: { logger: Logger; errorPage: URL },
): Promise<Response> {
  const host = documentHost(outcome.clientId);
  const { requestId, failure } = outcome;
  if (outcome.pinned) {
    deps.logger.warn(
      { requestId, host, failure, pinned: true },
      "client metadata document could not be read; North's pinned copy stood in",
    );
  }
  const error = await libraryError(outcome.response, deps.errorPage);
  if (error === null) return outcome.response;
  const headers = { ...SECURITY_HEADERS, "Content-Type": "text/html; charset=utf-8" };
  if (host && error === "invalid_client") {
    const reason = failure ?? (outcome.fetched ? "invalid_document" : "refused");
    deps.logger.warn(
      { requestId, host, failure: reason },
      "client metadata document could not be read",
    );
    const page = await messagePage(
      "This app's registration could not be read",
      `North could not read the registration of the app you are connecting from its host, ${host}. ${FAILURE_WORDS[reason]}`,
      "Try again in a few minutes. If it keeps happening, tell whoever runs North: their log names the reason.",
    );
    return new Response(page, { status: HOST_FAILURES.has(reason) ? 502 : 400, headers });
  }
  deps.logger.info({ requestId, error }, "authorization request refused");
  const page = await messagePage(
    "This sign-in request is not valid",
    ERROR_WORDS[error] ?? "The app's sign-in request was refused.",
    "Start again from your Claude app.",
  );
  return new Response(page, { status: 400, headers });
}
