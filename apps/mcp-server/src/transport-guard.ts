import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";

export interface TransportGuardOptions {
  /** Host names (no port) this server answers to. Anything else is a DNS-rebinding attempt. */
  allowedHosts: readonly string[];
  /** Exact origins (scheme://host[:port]) allowed to call from a browser. */
  allowedOrigins: readonly string[];
}

/** The hostname of a Host header, without port; IPv6 literals keep their brackets. */
function hostname(host: string): string {
  const trimmed = host.trim().toLowerCase();
  if (trimmed.startsWith("[")) return trimmed.slice(0, trimmed.indexOf("]") + 1);
  return trimmed.replace(/:\d+$/, "");
}

/**
 * The request's own origin: the exact host and port it was sent to (the Host header, already
 * checked), under either scheme — a TLS proxy in front may change the scheme, never the name.
 * A page on the same host name but another port is another origin and is refused.
 */
function ownOrigins(host: string): string[] {
  const exact = host.trim().toLowerCase();
  return [`http://${exact}`, `https://${exact}`];
}

/**
 * A browser serializes the origin of a POST as `null` when the page's referrer policy is
 * `no-referrer` (Fetch §3.1, which the admin console sends), even to its own origin. Such a
 * request is this server's own only if the browser itself says so: `Sec-Fetch-Site:
 * same-origin`, a header no page can set. A page on another port is `same-site` and stays
 * refused; an opaque origin without that header (a sandboxed frame, a `data:` page) too.
 */
const ownOpaqueOrigin = (origin: string, fetchSite: string | undefined) =>
  origin === "null" && fetchSite === "same-origin";

/**
 * DNS-rebinding and cross-origin protection (SPEC §3), on every route: an unknown `Host` → 403;
 * an `Origin` that is present and neither exactly an allowed origin (scheme, host and port) nor
 * exactly this request's own origin (see {@link ownOpaqueOrigin}) → 403. Requests without
 * `Origin` (CLI hosts, server-to-server) pass.
 */
export function transportGuard(options: TransportGuardOptions): MiddlewareHandler {
  const hosts = new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  const origins = new Set(options.allowedOrigins.map((o) => o.toLowerCase().replace(/\/$/, "")));
  return async (c, next) => {
    // A Request built in process (app.request) carries no Host header; its URL says the same.
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    if (!host || !hosts.has(hostname(host))) {
      throw new HTTPException(403, { message: "Host not allowed" });
    }
    const origin = c.req.header("origin");
    if (
      origin !== undefined &&
      !origins.has(origin.toLowerCase()) &&
      !ownOrigins(host).includes(origin.toLowerCase()) &&
      !ownOpaqueOrigin(origin, c.req.header("sec-fetch-site"))
    ) {
      throw new HTTPException(403, { message: "Origin not allowed" });
    }
    await next();
  };
}
