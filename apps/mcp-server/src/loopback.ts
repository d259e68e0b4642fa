import ipaddr from "ipaddr.js";

/** The one loopback name that is not an address. */
const LOCALHOST = "localhost";

/**
 * The host names of this machine as a URL spells them: the default `Host` allow-list, and what
 * makes a plain-http URL acceptable (an IdP on this machine, a native app's redirect, RFC 8252).
 */
export const LOOPBACK_HOSTS = ["127.0.0.1", LOCALHOST, "[::1]"] as const;

/** Whether a URL's host is this machine. */
export const isLoopbackHost = (hostname: string): boolean =>
  (LOOPBACK_HOSTS as readonly string[]).includes(hostname);

/**
 * Whether an address as an operator writes it (a bind address or an allowed `Host`, any case,
 * IPv6 with or without brackets) is this machine: `localhost`, 127.0.0.0/8 or ::1. Broader than
 * {@link isLoopbackHost}, which takes only the spellings a URL gives; false for 0.0.0.0.
 */
export function isLoopbackAddress(host: string): boolean {
  const name = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (name === LOCALHOST) return true;
  if (!ipaddr.isValid(name)) return false;
  return ipaddr.process(name).range() === "loopback";
}
