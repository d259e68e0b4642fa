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

/** An origin on one of our own host names (e.g. the MCP Inspector on localhost). */
function sameHostOrigin(origin: string, hosts: Set<string>): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && hosts.has(hostname(url.host));
  } catch {
    return false;
  }
}

/**
 * DNS-rebinding protection (SPEC §3): an unknown `Host` → 403; an `Origin` that is present and
 * not allowed → 403. Requests without `Origin` (CLI hosts, server-to-server) pass, and so do
 * browser origins on one of our own host names: a rebinding page carries its own, foreign name.
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
      !sameHostOrigin(origin, hosts)
    ) {
      throw new HTTPException(403, { message: "Origin not allowed" });
    }
    await next();
  };
}
