import { authorizationServerTables as ast, type Database } from "@north/db";
import { eq } from "drizzle-orm";
import type { ConsentClient } from "./pages.ts";
import { isLoopbackRedirect } from "./protocol.ts";

/** Longest client name the consent page shows; the rest is cut. */
const MAX_SHOWN_NAME = 80;
const UNNAMED = "An unnamed app";

/**
 * A URL with a scheme, or a domain name (ending in letters; the ideographic full stop and the
 * dot-like marks NFKC keeps included), up to a closing bracket. Matched after {@link readable}.
 */
const WEB_ADDRESS =
  /[a-z][a-z0-9+.-]*:\/\/[^\s)\]}>]*|(?:[\p{L}\p{N}-]+[.\u3002\u00b7\u2027\u2219\u22c5\u30fb])+\p{L}{2,}[\p{L}\p{N}-]*(?::\d+)?(?:[/?#][^\s)\]}>]*)?/giu;

/**
 * Characters a page renders as nothing: format characters (zero-width space, bidi marks…),
 * other default-ignorable ones (Hangul fillers, variation selectors) and controls other than
 * white space.
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]|(?!\s)\p{Cc}/gu;

/**
 * A name as a person reads it: compatibility forms folded (NFKC: U+2024 ONE DOT LEADER is a
 * dot, full-width letters are letters) and invisible characters dropped, so a look-alike of a
 * web address is matched as the address it reads as.
 */
const readable = (name: string) => name.normalize("NFKC").replace(INVISIBLE, "");

/**
 * A client's self-declared name as the consent page shows it: without web addresses, so a name
 * like "Claude (https://claude.ai)" — or one spelled with look-alike dots or invisible characters
 * — cannot borrow a site the page does not vouch for; the page names the hosts itself.
 */
export function shownClientName(name: string | null): string {
  const shown = readable(name ?? "")
    .replace(WEB_ADDRESS, "")
    .replace(/[([{<]\s*[)\]}>]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, MAX_SHOWN_NAME);
  return shown || UNNAMED;
}

const parsed = (uri: string | null | undefined) => {
  if (!uri) return null;
  try {
    return new URL(uri);
  } catch {
    return null;
  }
};

/**
 * Who receives the grant a pending authorization asks for (SPEC §3a): the host the redirect URI
 * sends the code to (from the signed authorization query, else the client's only registered
 * URI), the metadata document's host for a CIMD client, whether the client is unverified (DCR),
 * and its `client_uri` only when that shares the redirect's origin — a self-declared home page
 * elsewhere would name a site that never receives anything.
 */
export async function describeConsentClient(
  db: Database,
  clientId: string,
  continueQuery: string,
): Promise<ConsentClient> {
  const [client] = await db
    .select({
      name: ast.oauthClient.name,
      uri: ast.oauthClient.uri,
      redirectUris: ast.oauthClient.redirectUris,
      discovery: ast.oauthClient.clientDiscoveryId,
    })
    .from(ast.oauthClient)
    .where(eq(ast.oauthClient.clientId, clientId));
  const requested = new URLSearchParams(continueQuery).get("redirect_uri");
  const only = client?.redirectUris.length === 1 ? client.redirectUris[0] : undefined;
  const redirect = parsed(requested ?? only);
  const home = parsed(client?.uri);
  const metadataDocument = Boolean(client?.discovery) && clientId.startsWith("https://");
  const onThisComputer =
    redirect !== null && (isLoopbackRedirect(redirect.href) || redirect.host === "");
  return {
    name: shownClientName(client?.name ?? null),
    redirectHost: redirect ? redirect.host || redirect.protocol : "an address North cannot read",
    onThisComputer,
    documentHost: metadataDocument ? new URL(clientId).host : null,
    unverified: !metadataDocument,
    homePage:
      home && redirect && home.origin === redirect.origin && home.origin !== "null"
        ? home.href
        : null,
  };
}
