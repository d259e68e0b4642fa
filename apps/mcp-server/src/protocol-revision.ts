/**
 * Which protocol revision a `POST /mcp` claims, read without the SDK: the 2026-07-28 revision
 * puts a version envelope in every request's `params._meta` and names it in the
 * `MCP-Protocol-Version` header; the 2025 revisions negotiate it once with `initialize`.
 */

/** The envelope key that carries a 2026-07-28 request's own protocol version. */
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";

/** The first revision of the stateless, per-request era. */
export const FIRST_MODERN_REVISION = "2026-07-28";

/** Whether the request claims a 2026-07-28-or-later revision, by its header or its body. */
export function claimsModernRevision(request: Request, body: unknown): boolean {
  const header = request.headers.get("mcp-protocol-version");
  if (header !== null && /^\d{4}-\d\d-\d\d$/.test(header) && header >= FIRST_MODERN_REVISION) {
    return true;
  }
  return (Array.isArray(body) ? body : [body]).some((message) => {
    const meta = (message as { params?: { _meta?: unknown } } | null)?.params?._meta;
    return typeof meta === "object" && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
  });
}

/**
 * Whether a message's envelope names a 2026-07-28-or-later revision. An envelope that names a
 * 2025 revision is a 2025 request, which the SDK routes to the 2025 transport.
 */
export function envelopesModernRevision(message: unknown): boolean {
  const meta = (message as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const version =
    typeof meta === "object" && meta !== null ? meta[PROTOCOL_VERSION_META_KEY] : undefined;
  return (
    typeof version === "string" &&
    /^\d{4}-\d\d-\d\d$/.test(version) &&
    version >= FIRST_MODERN_REVISION
  );
}
