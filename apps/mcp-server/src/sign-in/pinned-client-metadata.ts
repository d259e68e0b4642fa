/**
 * Decision 032: North keeps a pinned copy of Claude Code's Client ID Metadata Document, used
 * only when claude.ai cannot be read (claude.ai sometimes answers datacenter addresses with a
 * challenge page, and Claude Code never falls back to DCR). Never over a document the host did
 * send — valid, invalid or too large — and never when the host says it is gone (404, 410).
 */
import type { ClientMetadataResourceFetch } from "@better-auth/oauth-provider";
import {
  classifyMetadataFetch,
  type MetadataFailureClass,
  type MetadataFetch,
  notePinnedCopy,
} from "./metadata-fetch.ts";

/**
 * The pinned documents, by client id. Each is a public client whose redirect URIs are loopback
 * only (RFC 8252: any port), so standing in for the live document sends a code nowhere but the
 * person's own machine.
 */
export const PINNED_CLIENT_METADATA: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  "https://claude.ai/oauth/claude-code-client-metadata": {
    client_id: "https://claude.ai/oauth/claude-code-client-metadata",
    client_name: "Claude Code",
    redirect_uris: ["http://localhost/callback", "http://127.0.0.1/callback"],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  },
};

/** The failures a pinned copy stands in for: the host could not be reached, or would not answer. */
const STANDS_IN_FOR = new Set<MetadataFailureClass>(["network", "timeout", "status", "challenge"]);
/** The host's own word that the document is gone: the client id is withdrawn, not unreachable. */
const GONE = new Set([404, 410]);
/** How long the library keeps a pinned copy before trying the live document again. */
const PINNED_MAX_AGE_S = 300;

/**
 * Wraps the metadata transport: a fetch of a pinned client id that fails as
 * {@link STANDS_IN_FOR} says answers with the pinned copy instead (and notes it, so the
 * authorize route logs it); every other outcome passes through unchanged.
 */
export function withPinnedClientMetadata(fetch: ClientMetadataResourceFetch): MetadataFetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const pinned = PINNED_CLIENT_METADATA[url];
    let outcome: unknown;
    try {
      outcome = await fetch(input, init);
    } catch (error) {
      outcome = error;
    }
    const failure = classifyMetadataFetch(outcome);
    const gone = outcome instanceof Response && GONE.has(outcome.status);
    if (pinned && failure && STANDS_IN_FOR.has(failure) && !gone) {
      notePinnedCopy();
      return new Response(JSON.stringify(pinned), {
        status: 200,
        headers: {
          "content-type": "application/json",
          "cache-control": `max-age=${PINNED_MAX_AGE_S}`,
        },
      });
    }
    if (outcome instanceof Response) return outcome;
    throw outcome;
  };
}
