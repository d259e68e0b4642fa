/**
 * The host names of this machine as a URL spells them: the default `Host` allow-list, and what
 * makes a plain-http URL acceptable (an IdP on this machine, a native app's redirect, RFC 8252).
 */
export const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"] as const;

/** Whether a URL's host is this machine. */
export const isLoopbackHost = (hostname: string): boolean =>
  (LOOPBACK_HOSTS as readonly string[]).includes(hostname);
