/**
 * The network transport North gives the CIMD plugin for Client ID Metadata
 * Documents (and for the resources they own, such as a `jwks_uri`).
 *
 * SPEC: fetched over https only, never from loopback, private, link-local or
 * otherwise special addresses, with the resolved address pinned, no redirects,
 * a size cap, a timeout.
 *
 * How that is held:
 * - the URL must be `https:`, carry no credentials, and the request must be a
 *   bodiless GET; anything else is refused before any DNS or network work;
 * - the hostname is resolved exactly once, and every address it resolves to
 *   must be public unicast (`ipaddr.js` range "unicast", IPv4-mapped IPv6
 *   folded to IPv4 first, IPv6 inside 2000::/3, none of the named cloud
 *   metadata addresses). One special address refuses
 *   the whole name. A literal IP host is checked the same way;
 * - the connection goes to the checked IP itself (`host` is the IP), with the
 *   hostname kept as the TLS SNI, certificate identity and `Host` header, so
 *   nothing re-resolves DNS between the check and the connect;
 * - 3xx is refused (304 only passes as the answer to a conditional request),
 *   the body is read into memory up to `maxBytes` and refused past it, and
 *   one timer covers DNS, connect, TLS, headers and body. The caller's
 *   `init.signal` aborts all of it.
 *
 * Every refusal is a {@link MetadataFetchError}: a short message naming the
 * reason, never the URL or any part of the response. The CIMD plugin catches
 * any rejection of this function and answers `invalid_client` (400), so a
 * refusal never becomes a 500 from North. The plugin's answer does not say
 * why, so each fetch also notes its {@link MetadataFailureClass} where the
 * authorize route reads it ({@link observeMetadataFetches}) to name the reason
 * on its page and in its log line.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import type { ClientMetadataResourceFetch } from "@better-auth/oauth-provider";
import ipaddr from "ipaddr.js";
import { MetadataFetchError, noteFetch } from "./metadata-fetch-outcomes.ts";

export {
  classifyMetadataFetch,
  type MetadataFailureClass,
  MetadataFetchError,
  type MetadataFetchRefusal,
  notePinnedCopy,
  observeMetadataFetches,
} from "./metadata-fetch-outcomes.ts";

export type ResolvedAddress = { address: string; family: 4 | 6 };

/**
 * What {@link createMetadataFetch} returns: a {@link ClientMetadataResourceFetch}
 * (assignable to it) that always answers with a promise.
 */
export type MetadataFetch = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

export type MetadataFetchOptions = {
  /** One deadline for DNS, connect, TLS, headers and body. Default 5000 ms. */
  timeoutMs?: number;
  /** Largest body accepted, in bytes. Default 5 KiB, the CIMD plugin's own cap. */
  maxBytes?: number;
  /** Resolves a hostname to all its addresses. Default `node:dns/promises` lookup, all: true. */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
  /**
   * TESTS ONLY: lets an address through the special-address check (a test
   * pointing at its own 127.0.0.1 server). Never set in production.
   */
  allowAddress?: (ip: string) => boolean;
  /**
   * TESTS ONLY: extra trusted CA (PEM) for a test server's self-signed
   * certificate. Certificate verification itself stays on.
   */
  tlsCa?: string | Buffer;
};

const DEFAULT_TIMEOUT_MS = 5000;
// The CIMD plugin refuses a larger document anyway; refusing it here names the reason.
const DEFAULT_MAX_BYTES = 5 * 1024;
/** Request headers passed on from the caller; everything else is dropped. */
const FORWARDED_HEADERS = ["accept", "if-none-match", "if-modified-since"] as const;
const CONDITIONAL_HEADERS = ["if-none-match", "if-modified-since"] as const;
const NULL_BODY_STATUSES = new Set([204, 205, 304]);
/** What the CIMD plugin takes as JSON; anything else (an HTML challenge page) is not read. */
const JSON_CONTENT_TYPE = /^application\/(?:[-\w.]+\+)?json\s*(?:;|$)/i;
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");
/**
 * Cloud metadata and host-agent addresses, refused by name whatever range ipaddr.js puts them in:
 * Azure's WireServer (168.63.129.16, plain unicast to ipaddr.js), Alibaba Cloud's metadata
 * service (100.100.100.200, inside 100.64.0.0/10) and AWS's IPv6 instance metadata
 * (fd00:ec2::254, unique-local). The range check already refuses the last two; naming them keeps
 * each refusal from resting on one classification.
 */
export const CLOUD_METADATA_ADDRESSES: readonly string[] = [
  "168.63.129.16",
  "100.100.100.200",
  "fd00:ec2::254",
];
const CLOUD_METADATA = new Set(
  CLOUD_METADATA_ADDRESSES.map((ip) => ipaddr.parse(ip).toNormalizedString()),
);

/**
 * True only for a public unicast address: `ipaddr.js` classifies it as
 * "unicast" after IPv4-mapped IPv6 is folded to IPv4, and an IPv6 address must
 * also sit in 2000::/3 (global unicast), which shuts out the unassigned and
 * IETF-reserved space ipaddr.js leaves as "unicast" (e.g. ::7f00:1). The cloud metadata
 * addresses ({@link CLOUD_METADATA_ADDRESSES}) are never public, whatever their range.
 */
export function isPublicUnicastAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(ip);
  } catch {
    return false;
  }
  if (CLOUD_METADATA.has(parsed.toNormalizedString())) return false;
  if (parsed.range() !== "unicast") return false;
  if (parsed.kind() === "ipv6") return parsed.match(GLOBAL_UNICAST_V6);
  return true;
}

type Target = {
  url: URL;
  /** Hostname without IPv6 brackets. */
  hostname: string;
  literalIp: boolean;
  headers: Record<string, string>;
  conditional: boolean;
};

function inputUrl(input: string | URL | Request): string {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

function parseTarget(input: string | URL | Request, init: RequestInit | undefined): Target {
  let url: URL;
  try {
    url = new URL(inputUrl(input));
  } catch {
    throw new MetadataFetchError("invalid_url");
  }
  if (url.protocol !== "https:") throw new MetadataFetchError("not_https");
  if (url.username !== "" || url.password !== "") {
    throw new MetadataFetchError("credentials_in_url");
  }
  const request = input instanceof Request ? input : undefined;
  const method = (init?.method ?? request?.method ?? "GET").toUpperCase();
  if (method !== "GET") throw new MetadataFetchError("method_not_allowed");
  if (init?.body != null || request?.body != null) throw new MetadataFetchError("request_body");

  let given: Headers;
  try {
    given = new Headers(init?.headers ?? request?.headers);
  } catch {
    throw new MetadataFetchError("invalid_request");
  }
  const headers: Record<string, string> = {
    host: url.host,
    "accept-encoding": "identity",
    "user-agent": "north-metadata-fetch",
  };
  for (const name of FORWARDED_HEADERS) {
    const value = given.get(name);
    if (value !== null) headers[name] = value;
  }
  const conditional = CONDITIONAL_HEADERS.some((name) => headers[name] !== undefined);

  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return { url, hostname, literalIp: isIP(hostname) !== 0, headers, conditional };
}

async function defaultLookup(hostname: string): Promise<ResolvedAddress[]> {
  const results = await dnsLookup(hostname, { all: true, verbatim: true });
  return results.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
}

function responseHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A header the fetch Headers class cannot hold is dropped, not fatal.
    }
  }
  return headers;
}

/** Resolve once; every answer must be acceptable; the first one is pinned. */
async function pinAddress(
  target: Target,
  lookup: NonNullable<MetadataFetchOptions["lookup"]>,
  acceptable: (ip: string) => boolean,
): Promise<string> {
  if (target.literalIp) {
    if (!acceptable(target.hostname)) throw new MetadataFetchError("special_address");
    return target.hostname;
  }
  let answers: ResolvedAddress[];
  try {
    answers = await lookup(target.hostname);
  } catch {
    throw new MetadataFetchError("dns_failure");
  }
  const first = answers[0];
  if (first === undefined) throw new MetadataFetchError("dns_failure");
  if (!answers.every((answer) => acceptable(answer.address))) {
    throw new MetadataFetchError("special_address");
  }
  return first.address;
}

/**
 * One GET over TLS to the pinned address (SNI and certificate identity stay the hostname): a
 * redirect, a body that is not JSON or over `maxBytes`, or a network failure is an error.
 */
function exchange(
  target: Target,
  pinned: string,
  stop: AbortSignal,
  { maxBytes, tlsCa }: { maxBytes: number; tlsCa: MetadataFetchOptions["tlsCa"] },
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: Response | MetadataFetchError): void => {
      if (settled) return;
      settled = true;
      stop.removeEventListener("abort", onStop);
      // The body, if any, is already in memory: the socket is never reused.
      req.destroy();
      if (outcome instanceof Response) resolve(outcome);
      else reject(outcome);
    };
    const onStop = (): void => finish(stop.reason as MetadataFetchError);

    const req = httpsRequest({
      host: pinned,
      port: target.url.port === "" ? 443 : Number(target.url.port),
      path: `${target.url.pathname}${target.url.search}`,
      method: "GET",
      headers: target.headers,
      agent: false,
      // SNI and certificate identity stay the hostname, never the pinned IP.
      servername: target.literalIp ? undefined : target.hostname,
      ...(tlsCa === undefined ? {} : { ca: tlsCa }),
    });
    req.on("error", () => finish(new MetadataFetchError("network")));
    req.on("response", (res) => {
      res.on("error", () => finish(new MetadataFetchError("network")));
      res.on("aborted", () => finish(new MetadataFetchError("network")));
      const status = res.statusCode ?? 0;
      if (status === 304 && target.conditional) {
        // "Not Modified" answers the caller's own validators; it is not a redirect.
        finish(new Response(null, { status, headers: responseHeaders(res) }));
        return;
      }
      if (status >= 300 && status < 400) return finish(new MetadataFetchError("redirect"));
      if (status < 200 || status > 599) return finish(new MetadataFetchError("unexpected_status"));
      if (status >= 400 || NULL_BODY_STATUSES.has(status)) {
        // Only the status matters to the caller; an error body is never read.
        finish(new Response(null, { status, headers: responseHeaders(res) }));
        return;
      }
      if (!JSON_CONTENT_TYPE.test(res.headers["content-type"] ?? "")) {
        return finish(new MetadataFetchError("not_json"));
      }
      const declared = Number(res.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes) {
        return finish(new MetadataFetchError("too_large"));
      }
      const chunks: Buffer[] = [];
      let received = 0;
      res.on("data", (chunk: Buffer) => {
        received += chunk.byteLength;
        if (received > maxBytes) return finish(new MetadataFetchError("too_large"));
        chunks.push(chunk);
      });
      res.on("end", () => {
        if (settled) return;
        const body = new Uint8Array(Buffer.concat(chunks, received));
        finish(new Response(body, { status, headers: responseHeaders(res) }));
      });
    });

    if (stop.aborted) onStop();
    else stop.addEventListener("abort", onStop, { once: true });
    req.end();
  });
}

export function createMetadataFetch(options: MetadataFetchOptions = {}): MetadataFetch {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const lookup = options.lookup ?? defaultLookup;
  const allowAddress = options.allowAddress;
  const tlsCa = options.tlsCa;

  const acceptable = (ip: string): boolean =>
    isPublicUnicastAddress(ip) || allowAddress?.(ip) === true;

  const fetchOnce: MetadataFetch = async (input, init) => {
    const target = parseTarget(input, init);
    const callerSignal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    if (callerSignal?.aborted) throw new MetadataFetchError("aborted");

    const stopper = new AbortController();
    const timer = setTimeout(() => stopper.abort(new MetadataFetchError("timeout")), timeoutMs);
    const onCallerAbort = (): void => stopper.abort(new MetadataFetchError("aborted"));
    callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
    const stopped = new Promise<never>((_, reject) => {
      stopper.signal.addEventListener("abort", () => reject(stopper.signal.reason), { once: true });
    });
    stopped.catch(() => {});
    try {
      const pinned = await Promise.race([pinAddress(target, lookup, acceptable), stopped]);
      return await exchange(target, pinned, stopper.signal, { maxBytes, tlsCa });
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener("abort", onCallerAbort);
    }
  };
  const fetchMetadata: MetadataFetch = async (input, init) => {
    try {
      const response = await fetchOnce(input, init);
      noteFetch(response);
      return response;
    } catch (error) {
      noteFetch(error);
      throw error;
    }
  };
  // Checked here: what North hands the CIMD plugin fits the plugin's transport type.
  return fetchMetadata satisfies ClientMetadataResourceFetch;
}
