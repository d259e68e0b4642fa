import { z } from "zod";
import { DEFAULT_PROTOCOL_REQUESTS_PER_MINUTE } from "./limiter.ts";

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

/** Every environment variable North reads. The README's configuration table mirrors this. */
export const configSchema = z.object({
  DATABASE_URL: z
    .string()
    .optional()
    .describe("owner/migrator connection (migrate, provision, operator CLI)"),
  DATABASE_APP_URL: z.string().optional().describe("app login role connection used by serve"),
  DATABASE_MAINTENANCE_URL: z
    .string()
    .optional()
    .describe(
      "maintenance login role connection used by serve for the embeddings backfill, the periodic purge and the vector-index request; unset beside DATABASE_APP_URL, those stay off",
    ),
  REDIS_URL: z.string().optional().describe("shared rate-limiter store; in-process when unset"),
  DB_APP_LOGIN_USER: z.string().default("north_app"),
  DB_APP_LOGIN_PASSWORD: z.string().optional(),
  DB_MAINTENANCE_LOGIN_USER: z
    .string()
    .default("north_maintenance_login")
    .describe("name of the maintenance login role (provision)"),
  DB_MAINTENANCE_LOGIN_PASSWORD: z.string().optional().describe("its password (provision)"),
  NORTH_AUDIT_KEY: z.string().min(16).optional().describe("HMAC key for audit fingerprints"),
  NORTH_SECRET_KEY: z
    .string()
    .min(32)
    .optional()
    .describe(
      "encrypts IdP client secrets and the authorization server's signing keys (at least 32 characters)",
    ),
  NORTH_TOKEN: z.string().optional().describe("API token for serve --stdio"),
  NORTH_HOME: z.string().optional().describe("local state folder; default ./.north"),
  NORTH_PORT: positiveInt(7410),
  NORTH_HOST: z.string().default("127.0.0.1"),
  NORTH_ALLOWED_HOSTS: list,
  NORTH_ALLOWED_ORIGINS: list,
  NORTH_METRICS_TOKEN: z
    .string()
    .min(16)
    .optional()
    .describe(
      "bearer token for GET /metrics when serve is not bound to loopback (at least 16 characters); unset there, /metrics answers 404",
    ),
  NORTH_PUBLIC_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "this server's public URL: the OAuth issuer (its /mcp the resource); https makes cookies Secure",
    ),
  NORTH_RESOURCE_URL: z
    .string()
    .url()
    .optional()
    .describe("with NORTH_OAUTH_ISSUER: this server's public MCP URL, the JWT audience"),
  NORTH_OAUTH_ISSUER: z
    .string()
    .url()
    .optional()
    .describe("an external authorization server instead of North's own (its JWTs name the org)"),
  NORTH_OAUTH_JWKS_URL: z.string().url().optional(),
  NORTH_OAUTH_ORG_CLAIM: z.string().default("north_org"),
  NORTH_OAUTH_USER_CLAIM: z.string().default("sub"),
  NORTH_WRITES_PER_MINUTE: positiveInt(30),
  NORTH_READS_PER_MINUTE: positiveInt(120),
  NORTH_PROTOCOL_REQUESTS_PER_MINUTE: positiveInt(DEFAULT_PROTOCOL_REQUESTS_PER_MINUTE).describe(
    "JSON-RPC messages of any method (tools/list, prompts/*, ping, each message of a batch) one principal may send per minute",
  ),
  NORTH_PURGE_INTERVAL_S: z.coerce
    .number()
    .int()
    .min(0)
    .default(3600)
    .describe("seconds between purges of expired memory bodies; 0 turns the timer off"),
  NORTH_RECALL_TOKEN_BUDGET: positiveInt(1500),
  NORTH_STATEMENT_TIMEOUT_MS: positiveInt(5000).describe(
    "statement timeout of every app-role statement, so one caller cannot hold the pool",
  ),
  NORTH_DB_POOL_MAX: positiveInt(10).describe("connections in the app-role pool of one replica"),
  NORTH_DB_POOLER: z
    .enum(["none", "transaction"])
    .default("none")
    .describe(
      "transaction: DATABASE_APP_URL leads to a transaction pooler (PgBouncer pool_mode = transaction): no named prepared statements, timeouts set per transaction",
    ),
  NORTH_DB_CONNECT_TIMEOUT_MS: positiveInt(5000).describe(
    "a new database connection not made by then fails; while PostgreSQL is unreachable a call answers NORTH_UNAVAILABLE within it",
  ),
  NORTH_DRAIN_TIMEOUT_MS: positiveInt(10_000).describe(
    "on SIGTERM/SIGINT, how long calls in flight may run before the server closes; a second signal exits at once",
  ),
  NORTH_TENANT_CONCURRENCY: positiveInt(3).describe(
    "tool transactions one organisation may run at once per replica; keep below the pool size",
  ),
  NORTH_EMBEDDINGS_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "base URL of an OpenAI-compatible embeddings API (North POSTs <url>/embeddings, e.g. https://api.openai.com/v1); semantic recall when set",
    ),
  NORTH_EMBEDDINGS_MODEL: z
    .string()
    .min(1)
    .optional()
    .describe("embeddings model name sent with each request; required with NORTH_EMBEDDINGS_URL"),
  NORTH_EMBEDDINGS_API_KEY_FILE: z
    .string()
    .optional()
    .describe("file holding the embeddings API key, read once at start, sent as a Bearer token"),
  NORTH_EMBEDDINGS_BACKFILL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(30_000)
    .describe("milliseconds between embeddings backfill rounds; 0 turns the backfill off"),
  NORTH_EMBEDDINGS_TIMEOUT_MS: positiveInt(2000).describe(
    "an embeddings call with no answer by then is aborted (class timeout)",
  ),
  NORTH_EMBEDDINGS_BATCH_SIZE: positiveInt(32).describe(
    "texts per embeddings request when many are embedded at once",
  ),
  LOG_LEVEL: z.string().default("info"),
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
