import path from "node:path";
import { DEFAULT_PROTOCOL_REQUESTS_PER_MINUTE } from "@north/mcp-server";
import { z } from "zod";

/**
 * What the README's configuration table says of a variable (`scripts/config-docs.ts` writes the
 * table from these; a variable without them is refused there and by the drift test).
 */
export interface VariableDoc {
  /** The commands that read it: `serve`, `start`, `migrate`, `provision`, `CLI`… */
  usedBy: string;
  /** What it does, in a line. */
  meaning: string;
  /** The default as the table shows it, where the schema's own default is not the whole story. */
  shownDefault?: string;
}

/** The schema of one variable with its documentation attached. */
const documented = <T extends z.ZodType>(schema: T, doc: VariableDoc): T =>
  schema.meta({ description: doc.meaning, ...doc });

/** A variable's documentation, if it has any. */
export function variableDoc(schema: z.ZodType): VariableDoc | undefined {
  const meta = schema.meta() as Partial<VariableDoc> | undefined;
  if (!meta?.usedBy || !meta.meaning) return undefined;
  return { usedBy: meta.usedBy, meaning: meta.meaning, shownDefault: meta.shownDefault };
}

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const list = z
  .string()
  .optional()
  .transform((value) =>
    value
      ? value
          .split(",")
          .map((item) => item.trim())
          .filter(Boolean)
      : undefined,
  );
/** A switch: set to anything but empty, `0` or `false`. */
const flag = z
  .string()
  .optional()
  .transform((value) => value !== undefined && !["", "0", "false"].includes(value.toLowerCase()));

const LOCAL_DATABASE = "local `.north/` database";
const KEPT_LOCALLY = "kept in `.north/local.json`";

/**
 * Every environment variable North reads, each with its documentation: the README's
 * configuration table is generated from this (`bun scripts/config-docs.ts`), and a test fails
 * when they differ. Nothing else in North reads `process.env`.
 */
export const configSchema = z.object({
  DATABASE_URL: documented(z.string().optional(), {
    usedBy: "migrate, provision, CLI",
    meaning: "owner/migrator connection (a superuser, or a CREATEROLE member of `forma`)",
    shownDefault: LOCAL_DATABASE,
  }),
  DATABASE_APP_URL: documented(z.string().optional(), {
    usedBy: "serve",
    meaning: "the app login role; all run-time traffic",
    shownDefault: LOCAL_DATABASE,
  }),
  DATABASE_MAINTENANCE_URL: documented(z.string().optional(), {
    usedBy: "serve",
    meaning:
      "the maintenance login: only the embeddings backfill, the purge and the vector-index request (decision 031); unset beside `DATABASE_APP_URL`, those stay off (one warning)",
    shownDefault: LOCAL_DATABASE,
  }),
  REDIS_URL: documented(z.string().optional(), {
    usedBy: "serve",
    meaning: "shared rate-limiter store for several replicas",
    shownDefault: "in-process limiter",
  }),
  DB_APP_LOGIN_USER: documented(z.string().default("north_app"), {
    usedBy: "provision",
    meaning: "name of the app login role",
  }),
  DB_APP_LOGIN_PASSWORD: documented(z.string().optional(), {
    usedBy: "provision",
    meaning: "its password",
    shownDefault: "unchanged",
  }),
  DB_MAINTENANCE_LOGIN_USER: documented(z.string().default("north_maintenance_login"), {
    usedBy: "provision",
    meaning: "name of the maintenance login role (a member of `north_maintenance` only)",
  }),
  DB_MAINTENANCE_LOGIN_PASSWORD: documented(z.string().optional(), {
    usedBy: "provision",
    meaning: "its password",
    shownDefault: "unchanged",
  }),
  NORTH_AUDIT_KEY: documented(z.string().min(16).optional(), {
    usedBy: "serve",
    meaning: "HMAC key (≥ 16 chars) for audit fingerprints; required with `DATABASE_APP_URL`",
    shownDefault: KEPT_LOCALLY,
  }),
  NORTH_SECRET_KEY: documented(z.string().min(32).optional(), {
    usedBy: "serve, CLI",
    meaning:
      "≥ 32 chars; encrypts IdP client secrets and signing keys; required with `DATABASE_APP_URL` (not by `serve --stdio`)",
    shownDefault: KEPT_LOCALLY,
  }),
  NORTH_TOKEN: documented(z.string().optional(), {
    usedBy: "serve --stdio",
    meaning: "the API token a stdio session runs as",
  }),
  NORTH_HOME: documented(z.string().optional(), {
    usedBy: "start, CLI, stdio",
    meaning: "local state folder",
    shownDefault: "`./.north`",
  }),
  NORTH_PORT: documented(positiveInt(7410), {
    usedBy: "serve, start",
    meaning: "the port HTTP listens on (`--port` overrides)",
  }),
  NORTH_HOST: documented(z.string().default("127.0.0.1"), {
    usedBy: "serve, start",
    meaning: "the address HTTP listens on (`--host` overrides)",
  }),
  NORTH_ALLOWED_HOSTS: documented(list, {
    usedBy: "serve",
    meaning: "comma-separated `Host` names accepted (DNS-rebinding guard)",
    shownDefault: "loopback names + `--host`",
  }),
  NORTH_ALLOWED_ORIGINS: documented(list, {
    usedBy: "serve",
    meaning: "comma-separated exact browser origins (scheme://host:port) accepted",
    shownDefault: "none besides its own origin",
  }),
  NORTH_METRICS_TOKEN: documented(z.string().min(16).optional(), {
    usedBy: "serve",
    meaning:
      "bearer token for `/metrics` off loopback (≥ 16 chars); unset there, `/metrics` answers 404",
  }),
  NORTH_PUBLIC_URL: documented(z.string().url().optional(), {
    usedBy: "serve, CLI",
    meaning:
      "this server's public URL: the OAuth issuer (`/mcp` the resource); https → `Secure` cookies",
    shownDefault: "`http://127.0.0.1:PORT`",
  }),
  NORTH_OAUTH_ISSUER: documented(z.string().url().optional(), {
    usedBy: "serve",
    meaning:
      "an external authorization server instead of North's own (its JWTs name the organisation; with `NORTH_RESOURCE_URL`)",
    shownDefault: "— (North is its own)",
  }),
  NORTH_RESOURCE_URL: documented(z.string().url().optional(), {
    usedBy: "serve",
    meaning: "with `NORTH_OAUTH_ISSUER`: this server's public MCP URL, the JWTs' audience",
  }),
  NORTH_OAUTH_JWKS_URL: documented(z.string().url().optional(), {
    usedBy: "serve",
    meaning: "with `NORTH_OAUTH_ISSUER`: where its signing keys are",
    shownDefault: "`<issuer>/.well-known/jwks.json`",
  }),
  NORTH_OAUTH_ORG_CLAIM: documented(z.string().default("north_org"), {
    usedBy: "serve",
    meaning: "with `NORTH_OAUTH_ISSUER`: the JWT claim naming the organisation",
  }),
  NORTH_OAUTH_USER_CLAIM: documented(z.string().default("sub"), {
    usedBy: "serve",
    meaning: "with `NORTH_OAUTH_ISSUER`: the JWT claim naming the member",
  }),
  NORTH_EMBEDDINGS_URL: documented(z.string().url().optional(), {
    usedBy: "serve",
    meaning:
      "OpenAI-compatible embeddings endpoint base (`<url>/embeddings`); turns semantic recall on",
    shownDefault: "— (full-text recall)",
  }),
  NORTH_EMBEDDINGS_MODEL: documented(z.string().min(1).optional(), {
    usedBy: "serve",
    meaning: "the model name; required with the URL",
  }),
  NORTH_EMBEDDINGS_API_KEY_FILE: documented(z.string().optional(), {
    usedBy: "serve",
    meaning:
      "file holding the provider's key, read once at start (sent as `Authorization: Bearer`, never logged)",
  }),
  NORTH_EMBEDDINGS_TIMEOUT_MS: documented(positiveInt(2000), {
    usedBy: "serve",
    meaning: "a provider call with no answer by then counts as `timeout`",
  }),
  NORTH_EMBEDDINGS_BATCH_SIZE: documented(positiveInt(32), {
    usedBy: "serve",
    meaning: "texts per provider request",
  }),
  NORTH_EMBEDDINGS_BACKFILL_MS: documented(z.coerce.number().int().min(0).default(30_000), {
    usedBy: "serve",
    meaning:
      "between rounds embedding memories stored while the provider failed, or by another model (0: off)",
  }),
  NORTH_RECALL_TOKEN_BUDGET: documented(positiveInt(1500), {
    usedBy: "serve, serve --stdio",
    meaning:
      "tokens a recall answer's memories may take; the memories past it are left out and counted",
  }),
  NORTH_PURGE_INTERVAL_S: documented(z.coerce.number().int().min(0).default(3600), {
    usedBy: "serve",
    meaning: "seconds between purges of expired memory bodies (0: off)",
  }),
  NORTH_STATEMENT_TIMEOUT_MS: documented(positiveInt(5000), {
    usedBy: "serve",
    meaning: "statement timeout of every app-role statement (a longer call gets `NORTH_TIMEOUT`)",
  }),
  NORTH_DB_POOL_MAX: documented(positiveInt(10), {
    usedBy: "serve",
    meaning: "app-role connections per replica",
  }),
  NORTH_DB_CONNECT_TIMEOUT_MS: documented(positiveInt(5000), {
    usedBy: "serve",
    meaning: "a new database connection not made by then fails (the call gets `NORTH_UNAVAILABLE`)",
  }),
  NORTH_DB_POOLER: documented(z.enum(["none", "transaction"]).default("none"), {
    usedBy: "serve",
    meaning:
      "`transaction` when `DATABASE_APP_URL` leads to PgBouncer in transaction mode (see Production)",
  }),
  NORTH_TENANT_CONCURRENCY: documented(positiveInt(3), {
    usedBy: "serve",
    meaning: "tool transactions one organisation may run at once per replica; keep below the pool",
  }),
  NORTH_DRAIN_TIMEOUT_MS: documented(positiveInt(10_000), {
    usedBy: "serve, start",
    meaning: "on SIGTERM/SIGINT, how long calls in flight may finish before the server closes",
  }),
  NORTH_WRITES_PER_MINUTE: documented(positiveInt(30), {
    usedBy: "serve",
    meaning: "per-principal write budget",
  }),
  NORTH_READS_PER_MINUTE: documented(positiveInt(120), {
    usedBy: "serve",
    meaning: "per-principal read budget",
  }),
  NORTH_PROTOCOL_REQUESTS_PER_MINUTE: documented(
    positiveInt(DEFAULT_PROTOCOL_REQUESTS_PER_MINUTE),
    {
      usedBy: "serve, serve --stdio",
      meaning:
        "per-principal budget of JSON-RPC messages of any method (tools/list, prompts/*, ping, each message of a batch, each tools/call too)",
    },
  ),
  LOG_LEVEL: documented(
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    { usedBy: "serve", meaning: "pino level; logs never carry bodies or tokens" },
  ),
  NORTH_DEBUG: documented(flag, {
    usedBy: "CLI",
    meaning: "an unexpected CLI error prints its stack as well as its one line",
    shownDefault: "off",
  }),
  MIMALLOC_PURGE_DELAY: documented(z.string().optional(), {
    usedBy: "serve, start",
    meaning:
      "Bun's allocator reads it at launch: `-1` keeps freed memory for the next request (decision 046); serve's start log says whether it keeps them",
    shownDefault: "`-1` from the `bun run` scripts",
  }),
  NORTH_MIGRATIONS_DIR: documented(z.string().optional(), {
    usedBy: "migrate, start",
    meaning: "where migrations are read from",
    shownDefault: "the repo's `drizzle/`",
  }),
});

export type NorthConfig = z.output<typeof configSchema>;

/** Parses the environment; a bad value is a one-line error naming the variable, not its value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): NorthConfig {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const names = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid configuration: ${names}`);
  }
  return parsed.data;
}

/**
 * Whether `NORTH_DEBUG` asks for stacks, read on its own: when the CLI fails, the configuration
 * as a whole may be what failed to parse.
 */
export function debugRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return configSchema.shape.NORTH_DEBUG.safeParse(env.NORTH_DEBUG).data ?? false;
}

/** `NORTH_MIGRATIONS_DIR` resolved, or undefined for the repository's own `drizzle/`. */
export function migrationsFolder(config: NorthConfig): string | undefined {
  return config.NORTH_MIGRATIONS_DIR ? path.resolve(config.NORTH_MIGRATIONS_DIR) : undefined;
}

/** `http://HOST:PORT` for where serve listens; a wildcard host is shown as 127.0.0.1. */
export function localBaseUrl(host: string, port: number): string {
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return `http://${shown.includes(":") ? `[${shown}]` : shown}:${port}`;
}

/**
 * This server's public base URL, without a trailing slash: NORTH_PUBLIC_URL, else where serve
 * listens (NORTH_HOST and NORTH_PORT unless serve's flags say otherwise). The OAuth issuer and
 * the IdP callback `north org sso show` prints both derive from it, so they always agree.
 */
export function publicBaseUrl(
  config: NorthConfig,
  listen: { host?: string; port?: number } = {},
): string {
  if (config.NORTH_PUBLIC_URL) return config.NORTH_PUBLIC_URL.replace(/\/$/, "");
  return localBaseUrl(listen.host ?? config.NORTH_HOST, listen.port ?? config.NORTH_PORT);
}
