import { eq, inArray, sql } from "drizzle-orm";
import type { Database } from "./client.ts";
import { definerFunction } from "./definer.ts";
import { ssoConnections, ssoDomains } from "./schema/index.ts";

/** An organisation's identity provider as sign-in needs it; the secret still encrypted. */
export interface SsoConnection {
  organizationId: string;
  issuer: string;
  clientId: string;
  clientSecretEncrypted: string;
}

type SsoRow = {
  organization_id: string;
  issuer: string;
  client_id: string;
  client_secret_encrypted: string;
};

const toConnection = (row: SsoRow | undefined): SsoConnection | null =>
  row
    ? {
        organizationId: row.organization_id,
        issuer: row.issuer,
        clientId: row.client_id,
        clientSecretEncrypted: row.client_secret_encrypted,
      }
    : null;

/** Home-realm discovery: the IdP for an email's domain, if an organisation claimed it. */
export async function ssoConnectionForDomain(
  db: Database,
  domain: string,
): Promise<SsoConnection | null> {
  const rows = await db.execute<SsoRow>(
    sql`select * from public.sso_connection_for_domain(${domain.toLowerCase()})`,
  );
  return toConnection(rows[0]);
}

export async function ssoConnectionForOrganization(
  db: Database,
  organizationId: string,
): Promise<SsoConnection | null> {
  const rows = await db.execute<SsoRow>(
    sql`select * from public.sso_connection_for_organization(${organizationId}::uuid)`,
  );
  return toConnection(rows[0]);
}

export interface SetSsoParams {
  organizationId: string;
  issuer: string;
  clientId: string;
  clientSecretEncrypted: string;
  domains: readonly string[];
}

export class DomainTakenError extends Error {
  constructor(readonly domain: string) {
    super(`the domain ${domain} already belongs to another organisation`);
    this.name = "DomainTakenError";
  }
}

/** Creates or replaces an organisation's IdP and its domains, in one transaction. */
export async function setSsoConnection(db: Database, params: SetSsoParams): Promise<void> {
  const domains = [...new Set(params.domains.map((d) => d.toLowerCase()))];
  await db.transaction(async (tx) => {
    const taken = await tx
      .select({ domain: ssoDomains.domain, organizationId: ssoDomains.organizationId })
      .from(ssoDomains)
      .where(inArray(ssoDomains.domain, domains));
    const foreign = taken.find((d) => d.organizationId !== params.organizationId);
    if (foreign) throw new DomainTakenError(foreign.domain);
    await tx
      .insert(ssoConnections)
      .values({
        organizationId: params.organizationId,
        issuer: params.issuer,
        clientId: params.clientId,
        clientSecretEncrypted: params.clientSecretEncrypted,
      })
      .onConflictDoUpdate({
        target: ssoConnections.organizationId,
        set: {
          issuer: params.issuer,
          clientId: params.clientId,
          clientSecretEncrypted: params.clientSecretEncrypted,
          updatedAt: sql`now()`,
        },
      });
    await tx.delete(ssoDomains).where(eq(ssoDomains.organizationId, params.organizationId));
    await tx
      .insert(ssoDomains)
      .values(domains.map((domain) => ({ domain, organizationId: params.organizationId })));
  });
}

export interface SsoSummary {
  issuer: string;
  clientId: string;
  domains: string[];
}

/** What `north org sso show` prints: never the secret. */
export async function getSsoConnection(
  db: Database,
  organizationId: string,
): Promise<SsoSummary | null> {
  const [row] = await db
    .select({ issuer: ssoConnections.issuer, clientId: ssoConnections.clientId })
    .from(ssoConnections)
    .where(eq(ssoConnections.organizationId, organizationId));
  if (!row) return null;
  const domains = await db
    .select({ domain: ssoDomains.domain })
    .from(ssoDomains)
    .where(eq(ssoDomains.organizationId, organizationId))
    .orderBy(ssoDomains.domain);
  return { ...row, domains: domains.map((d) => d.domain) };
}

/** Removes an organisation's IdP (its domains go with it). True when there was one. */
export async function removeSsoConnection(db: Database, organizationId: string): Promise<boolean> {
  const removed = await db
    .delete(ssoConnections)
    .where(eq(ssoConnections.organizationId, organizationId))
    .returning({ organizationId: ssoConnections.organizationId });
  return removed.length > 0;
}

const SSO_CONNECTION_COLUMNS =
  "TABLE (organization_id uuid, issuer text, client_id text, client_secret_encrypted text)";

export const SSO_FOR_DOMAIN_FUNCTION = "sso_connection_for_domain";

/**
 * Home-realm discovery (SPEC §3a): the IdP configured for an email domain, before anyone is
 * signed in. The app role has no grant on `sso_connections`; this is its way in, one domain at a
 * time, and what it returns is what a redirect to the IdP needs.
 */
export const ssoForDomainDefiner = definerFunction({
  name: SSO_FOR_DOMAIN_FUNCTION,
  params: "p_domain text",
  returns: SSO_CONNECTION_COLUMNS,
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT c.organization_id, c.issuer, c.client_id, c.client_secret_encrypted
    FROM public.sso_domains d
    JOIN public.sso_connections c ON c.organization_id = d.organization_id
    WHERE d.domain = lower(p_domain);
END`,
});

export const SSO_FOR_ORGANIZATION_FUNCTION = "sso_connection_for_organization";

/** The IdP of one organisation, for the callback of a sign-in that discovery started. */
export const ssoForOrganizationDefiner = definerFunction({
  name: SSO_FOR_ORGANIZATION_FUNCTION,
  params: "p_organization_id uuid",
  returns: SSO_CONNECTION_COLUMNS,
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT c.organization_id, c.issuer, c.client_id, c.client_secret_encrypted
    FROM public.sso_connections c
    WHERE c.organization_id = p_organization_id;
END`,
});
