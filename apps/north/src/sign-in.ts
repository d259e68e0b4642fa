import { readFile, stat } from "node:fs/promises";
import {
  createFingerprinter,
  findGrant,
  getSsoConnection,
  listGrants,
  listMembers,
  organizationExists,
  removeSsoConnection,
  setSsoConnection,
} from "@north/db";
import { createSecretBox, isLoopbackHost, LOOPBACK_HOSTS, revokeAndAudit } from "@north/mcp-server";
import { type NorthConfig, publicBaseUrl } from "./config.ts";
import { requireUuid } from "./operator.ts";
import { CliError, type OwnerRuntime, openOwner } from "./runtime.ts";

/** Operator commands for sign-in (SPEC §3a): an organisation's IdP, and members' grants. */

/** The shape `sso_domains` accepts (lower case, at least two labels), with DNS length limits. */
const DOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;
const MAX_SECRET_BYTES = 4096;

/** What `org sso set` and `org sso show` print: never the secret. */
export interface SsoOutput {
  issuer: string;
  client_id: string;
  domains: string[];
  redirect_uri: string;
}

/** The callback to register at the IdP: under the issuer serve uses ({@link publicBaseUrl}). */
export function redirectUri(config: NorthConfig): string {
  return `${publicBaseUrl(config)}/sign-in/callback`;
}

/** An OpenID issuer as given (discovery compares it exactly): https, or http on loopback. */
export function parseIssuer(value: string | undefined): string {
  const issuer = value?.trim();
  if (!issuer) throw new CliError("--issuer is required (the IdP's issuer URL)");
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new CliError("--issuer must be an absolute URL, e.g. https://login.example.com");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    throw new CliError(
      `--issuer must use https (plain http only on ${LOOPBACK_HOSTS.slice(0, -1).join(", ")} or ${LOOPBACK_HOSTS.at(-1)})`,
    );
  }
  // Stored as given, since discovery compares it exactly, so it must already be plain.
  if (!/^https?:\/\/\S+$/.test(issuer) || issuer.length > 2000) {
    throw new CliError(
      "--issuer must be a plain URL: lower-case scheme, no spaces, ≤ 2000 characters",
    );
  }
  if (issuer.includes("?") || issuer.includes("#")) {
    throw new CliError("--issuer must not have a query or fragment");
  }
  if (url.username || url.password) throw new CliError("--issuer must not carry credentials");
  return issuer;
}

/** Email domains, lower-cased and deduplicated, in the order given. */
export function parseDomains(values: string[] | undefined): string[] {
  if (!values?.length) {
    throw new CliError("--domain is required (the members' email domain, e.g. firm.example)");
  }
  const domains = values.map((value) => {
    const domain = value.trim().toLowerCase();
    if (!DOMAIN.test(domain)) {
      throw new CliError(
        `--domain ${JSON.stringify(value)} is not a domain name (e.g. firm.example)`,
      );
    }
    return domain;
  });
  return [...new Set(domains)];
}

/** The client secret from its file, without one trailing newline. Never echoed. */
async function readSecret(path: string | undefined): Promise<string> {
  if (!path) throw new CliError("--client-secret-file is required (a file holding the secret)");
  let secret: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError(`--client-secret-file ${path} is not a file`);
    if (info.size > MAX_SECRET_BYTES) {
      throw new CliError(`--client-secret-file ${path} is over ${MAX_SECRET_BYTES} bytes`);
    }
    secret = await readFile(path, "utf8");
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as { code?: string }).code;
    throw new CliError(
      code === "ENOENT"
        ? `--client-secret-file ${path} does not exist`
        : `--client-secret-file ${path} cannot be read (${code ?? "error"})`,
    );
  }
  secret = secret.replace(/\r?\n$/, "");
  if (secret.trim() === "") throw new CliError(`--client-secret-file ${path} is empty`);
  return secret;
}

/** Runs `work` on the owner connection once the organisation is known to exist. */
async function inOrganization<T>(
  config: NorthConfig,
  organizationId: string,
  work: (runtime: OwnerRuntime) => Promise<T>,
): Promise<T> {
  const runtime = await openOwner(config);
  try {
    if (!(await organizationExists(runtime.owner.db, organizationId))) {
      throw new CliError("no such organization");
    }
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

/**
 * Creates or replaces an organisation's IdP: everything is checked — the secret file read —
 * before the database is touched, and the secret is stored only encrypted with NORTH_SECRET_KEY
 * (or the local install's key).
 */
export async function ssoSet(
  config: NorthConfig,
  flags: {
    org?: string;
    issuer?: string;
    "client-id"?: string;
    "client-secret-file"?: string;
    domain?: string[];
  },
): Promise<SsoOutput> {
  const organizationId = requireUuid(flags.org, "--org");
  const issuer = parseIssuer(flags.issuer);
  const clientId = flags["client-id"]?.trim();
  if (!clientId) throw new CliError("--client-id is required (the client id the IdP issued)");
  if (clientId.length > 500) throw new CliError("--client-id is at most 500 characters");
  const domains = parseDomains(flags.domain);
  const secret = await readSecret(flags["client-secret-file"]);
  if (config.DATABASE_URL && !config.NORTH_SECRET_KEY) {
    throw new CliError(
      "NORTH_SECRET_KEY is not set: it encrypts the IdP client secret (at least 32 characters) with DATABASE_URL",
    );
  }
  return inOrganization(config, organizationId, async (runtime) => {
    const key = config.NORTH_SECRET_KEY ?? runtime.local?.state.secretKey;
    if (!key) throw new CliError("NORTH_SECRET_KEY is not set");
    const clientSecretEncrypted = await createSecretBox(key).encrypt(secret);
    await setSsoConnection(runtime.owner.db, {
      organizationId,
      issuer,
      clientId,
      clientSecretEncrypted,
      domains,
    }).catch((error: unknown) => {
      // By name, as main does: the check holds the same in the bundle built for Node.
      if ((error as Error).name === "DomainTakenError") {
        throw new CliError(
          `--domain ${(error as { domain: string }).domain} already belongs to another organization`,
        );
      }
      throw error;
    });
    const stored = await readSso(config, runtime, organizationId);
    if (!stored) throw new Error("the SSO connection just set cannot be read back");
    return stored;
  });
}

/** An organisation's IdP as stored, in the printed shape; null when it has none. */
async function readSso(
  config: NorthConfig,
  runtime: OwnerRuntime,
  organizationId: string,
): Promise<SsoOutput | null> {
  const sso = await getSsoConnection(runtime.owner.db, organizationId);
  return sso
    ? {
        issuer: sso.issuer,
        client_id: sso.clientId,
        domains: sso.domains,
        redirect_uri: redirectUri(config),
      }
    : null;
}

export async function ssoShow(config: NorthConfig, flags: { org?: string }): Promise<SsoOutput> {
  const organizationId = requireUuid(flags.org, "--org");
  return inOrganization(config, organizationId, async (runtime) => {
    const sso = await readSso(config, runtime, organizationId);
    if (!sso) throw new CliError(`organisation ${organizationId} has no SSO configured`);
    return sso;
  });
}

/** Removes an organisation's IdP and frees its domains; its members sign in with API tokens. */
export async function ssoRemove(config: NorthConfig, flags: { org?: string }) {
  const organizationId = requireUuid(flags.org, "--org");
  return inOrganization(config, organizationId, async (runtime) => {
    if (!(await removeSsoConnection(runtime.owner.db, organizationId))) {
      throw new CliError(`organisation ${organizationId} has no SSO configured`);
    }
    return { removed: true as const };
  });
}

export interface GrantOutput {
  id: string;
  user_id: string;
  client_name: string | null;
  scopes: string[];
  created_at: string | null;
}

/** The grants of an organisation's members (or one member's), newest first, with emails. */
export async function grantList(config: NorthConfig, flags: { org?: string; user?: string }) {
  const organizationId = requireUuid(flags.org, "--org");
  const userId = flags.user === undefined ? undefined : requireUuid(flags.user, "--user");
  return inOrganization(config, organizationId, async (runtime) => {
    const db = runtime.owner.db;
    const emails = new Map(
      (await listMembers(db, { organizationId })).map((m) => [m.userId, m.email]),
    );
    if (userId && !emails.has(userId)) {
      throw new CliError("that user is not a member of that organization");
    }
    const grants: GrantOutput[] = (await listGrants(db, { organizationId, userId })).map((g) => ({
      id: g.id,
      user_id: g.userId,
      client_name: g.clientName,
      scopes: g.scopes,
      created_at: g.createdAt ? new Date(g.createdAt).toISOString() : null,
    }));
    return { grants, emails };
  });
}

/**
 * Revokes a grant as the console and the revocation endpoint do: consent and tokens go, and the
 * ledger records it (`grant_revoke`, reason `operator`) with the client fingerprinted by
 * NORTH_AUDIT_KEY, or the local install's key.
 */
export async function grantRevoke(config: NorthConfig, id: string | undefined) {
  const grantId = requireUuid(id, "grant revoke GRANT_ID");
  if (config.DATABASE_URL && !config.NORTH_AUDIT_KEY) {
    throw new CliError("NORTH_AUDIT_KEY is required with DATABASE_URL: it keys the audit ledger");
  }
  const runtime = await openOwner(config);
  try {
    const key = config.NORTH_AUDIT_KEY ?? runtime.local?.state.auditKey;
    if (!key) throw new CliError("NORTH_AUDIT_KEY is not set");
    const grant = await findGrant(runtime.owner.db, grantId);
    if (!grant) throw new CliError("no such grant");
    await revokeAndAudit(runtime.owner.db, grant, "operator", createFingerprinter(key));
    return { id: grantId, revoked: true as const };
  } finally {
    await runtime.close();
  }
}
