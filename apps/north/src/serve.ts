import { randomUUID } from "node:crypto";
import path from "node:path";
import {
  connectDatabase,
  createFingerprinter,
  type Database,
  freePort,
  purgeExpiredMemories,
} from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createCapabilities,
  createEmbeddingsProvider,
  createLogger,
  createMcpServer,
  createRateLimiter,
  createSignIn,
  describeError,
  type EmbeddingsProvider,
  LOOPBACK_HOSTS,
  type Logger,
  meterMessage,
  metricsAccessFor,
  type OAuthOptions,
  principalForToken,
  serveMcpStdio,
  startEmbeddingBackfill,
  startHttpServer,
} from "@north/mcp-server";
import { buildAdminApp, openConsoleSessionForMember } from "@north/web";
import { allocatorKeepsPages } from "./allocator.ts";
import { localBaseUrl, type NorthConfig, publicBaseUrl } from "./config.ts";
import { survivingLateSocketErrors } from "./late-socket-errors.ts";
import { ensureLocalWorkspace, repositoryRoot, tokenPath } from "./local.ts";
import { type AppRuntime, CliError, openApp } from "./runtime.ts";
import { onShutdown, type ShutdownStep } from "./shutdown.ts";

export interface ServeFlags {
  port?: number;
  host?: string;
}

function limiterFor(config: NorthConfig, logger: Logger) {
  return createRateLimiter({
    writesPerMinute: config.NORTH_WRITES_PER_MINUTE,
    readsPerMinute: config.NORTH_READS_PER_MINUTE,
    protocolRequestsPerMinute: config.NORTH_PROTOCOL_REQUESTS_PER_MINUTE,
    redisUrl: config.REDIS_URL,
    onRedisStateChange: (state) =>
      state === "ready"
        ? logger.info({ limiter: "redis" }, "rate limiter on Redis")
        : logger.warn({ limiter: "memory" }, "Redis unreachable: in-process insurance limiter"),
  });
}

/**
 * The embeddings provider when `NORTH_EMBEDDINGS_URL` is set (recall is then semantic), else
 * none. Its key file is read here, once; a problem with it stops the start.
 */
function embedderFor(config: NorthConfig, logger: Logger): EmbeddingsProvider | undefined {
  if (!config.NORTH_EMBEDDINGS_URL) return undefined;
  if (!config.NORTH_EMBEDDINGS_MODEL) {
    throw new CliError(
      "NORTH_EMBEDDINGS_MODEL is not set: NORTH_EMBEDDINGS_URL needs a model name",
    );
  }
  let embedder: EmbeddingsProvider;
  try {
    embedder = createEmbeddingsProvider({
      url: config.NORTH_EMBEDDINGS_URL,
      model: config.NORTH_EMBEDDINGS_MODEL,
      apiKeyFile: config.NORTH_EMBEDDINGS_API_KEY_FILE,
      timeoutMs: config.NORTH_EMBEDDINGS_TIMEOUT_MS,
      maxBatchSize: config.NORTH_EMBEDDINGS_BATCH_SIZE,
      logger,
    });
  } catch (error) {
    throw new CliError(`NORTH_EMBEDDINGS_API_KEY_FILE: ${(error as Error).message}`);
  }
  logger.info(
    { embedder: { model: embedder.model } },
    "semantic recall through an embeddings provider",
  );
  return embedder;
}

/**
 * Purges expired memory bodies every `NORTH_PURGE_INTERVAL_S` seconds (0: never), through the
 * SECURITY DEFINER function only the maintenance login may execute (decision 031); without that
 * login, never. Returns the stop step.
 */
function startPurgeTimer(config: NorthConfig, db: Database | undefined, logger: Logger) {
  if (config.NORTH_PURGE_INTERVAL_S === 0 || !db) return async () => {};
  const timer = setInterval(() => {
    purgeExpiredMemories(db).then(
      (result) => {
        if (result.purged > 0) logger.info(result, "purged expired memories");
      },
      (error) => logger.error(describeError(error), "purge failed"),
    );
  }, config.NORTH_PURGE_INTERVAL_S * 1000);
  timer.unref();
  return async () => clearInterval(timer);
}

/**
 * Production without `DATABASE_MAINTENANCE_URL` still serves requests (decision 031): one line
 * says which background jobs are therefore off, and that `north purge` still purges.
 */
function warnMaintenanceOff(
  config: NorthConfig,
  runtime: AppRuntime,
  embedder: EmbeddingsProvider | undefined,
  logger: Logger,
) {
  if (runtime.maintenance) return;
  const off = [
    ...(config.NORTH_PURGE_INTERVAL_S > 0 ? ["purge"] : []),
    ...(embedder && config.NORTH_EMBEDDINGS_BACKFILL_MS > 0 ? ["embeddings backfill"] : []),
  ];
  if (off.length === 0) return;
  logger.warn(
    { maintenanceOff: off },
    "DATABASE_MAINTENANCE_URL is not set: these background jobs are off; north purge on the owner connection still purges",
  );
}

/**
 * Bounds of the shutdown steps after the drain (decision 022). Each is the longest the step may
 * take, not what it usually takes (milliseconds): the pool's `close` gives queries 5 s and
 * returns within 6; a local PostgreSQL's fast shutdown gets the rest.
 */
const BACKGROUND_STOP_MS = 5_000;
const LIMITER_CLOSE_MS = 2_000;
const DATABASE_CLOSE_MS = 20_000;

/** What `north serve` and `bun run start` stop, in order, after the HTTP server has drained. */
function closingSteps(
  limiter: { close(): Promise<void> },
  runtime: { close(): Promise<void> },
  background: Array<() => Promise<void>>,
): ShutdownStep[] {
  return [
    {
      name: "background jobs",
      run: () => Promise.all(background.map((stop) => stop())),
      timeoutMs: BACKGROUND_STOP_MS,
    },
    { name: "rate limiter", run: () => limiter.close(), timeoutMs: LIMITER_CLOSE_MS },
    { name: "database", run: () => runtime.close(), timeoutMs: DATABASE_CLOSE_MS },
  ];
}

/** An external authorization server (`NORTH_OAUTH_ISSUER`), when one is configured (SPEC §3). */
function externalOAuth(config: NorthConfig): OAuthOptions | undefined {
  if (!config.NORTH_OAUTH_ISSUER) return undefined;
  if (!config.NORTH_RESOURCE_URL) {
    throw new CliError(
      "NORTH_RESOURCE_URL is not set: OAuth mode needs this server's public MCP URL",
    );
  }
  return {
    issuer: config.NORTH_OAUTH_ISSUER,
    jwksUrl: config.NORTH_OAUTH_JWKS_URL,
    resourceUrl: config.NORTH_RESOURCE_URL,
    organizationClaim: config.NORTH_OAUTH_ORG_CLAIM,
    userClaim: config.NORTH_OAUTH_USER_CLAIM,
  };
}

/**
 * The Host names to answer to: `NORTH_ALLOWED_HOSTS`, or the loopback names, the bound host
 * (unless a wildcard) and the public URL's host.
 */
function allowedHostsFor(config: NorthConfig, host: string): readonly string[] {
  return (
    config.NORTH_ALLOWED_HOSTS ?? [
      ...LOOPBACK_HOSTS,
      ...(host === "0.0.0.0" || host === "::" ? [] : [host]),
      ...(config.NORTH_PUBLIC_URL ? [new URL(config.NORTH_PUBLIC_URL).hostname] : []),
    ]
  );
}

/**
 * `north serve` (and the serving half of `bun run start`): HTTP on the app login role. Returns
 * the URL once listening.
 */
export async function serveHttp(
  config: NorthConfig,
  flags: ServeFlags,
  options: { logger?: Logger } = {},
) {
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL });
  survivingLateSocketErrors(logger);
  const external = externalOAuth(config);
  const embedder = embedderFor(config, logger);
  const runtime = await openApp(config);
  const { secretKey } = runtime;
  if (!secretKey) throw new CliError("NORTH_SECRET_KEY is not set: serve needs it for sign-in");
  const limiter = limiterFor(config, logger);
  const host = flags.host ?? config.NORTH_HOST;
  // The issuer names the port, so a random one is chosen before listening.
  const requestedPort = flags.port ?? config.NORTH_PORT;
  const port = requestedPort === 0 ? await freePort() : requestedPort;
  const localUrl = localBaseUrl(host, port);
  const issuer = publicBaseUrl(config, { host, port });
  // North is its own authorization server unless an external one is configured (SPEC §3).
  const signIn = external
    ? undefined
    : createSignIn({
        db: runtime.app.db,
        issuer,
        secret: secretKey,
        fingerprint: createFingerprinter(runtime.auditKey),
        logger,
        openConsole: (c, member) =>
          openConsoleSessionForMember(c, member, {
            db: runtime.app.db,
            publicUrl: config.NORTH_PUBLIC_URL,
            requestId: c.get("requestId"),
          }),
      });
  const oauth = external ?? signIn?.oauth;
  const allowedHosts = allowedHostsFor(config, host);
  const app = buildMcpApp({
    db: runtime.app.db,
    resolvePrincipal: createAuthResolver(runtime.app.db, oauth),
    oauth,
    signIn,
    admin: buildAdminApp({
      db: runtime.app.db,
      auditKey: runtime.auditKey,
      logger,
      publicUrl: config.NORTH_PUBLIC_URL,
    }),
    limiter,
    logger,
    auditKey: runtime.auditKey,
    allowedHosts,
    allowedOrigins: config.NORTH_ALLOWED_ORIGINS ?? [],
    embedder,
    metrics: metricsAccessFor(host, config.NORTH_METRICS_TOKEN),
    recallTokenBudget: config.NORTH_RECALL_TOKEN_BUDGET,
    tenantConcurrency: {
      perOrganization: Math.min(config.NORTH_TENANT_CONCURRENCY, config.NORTH_DB_POOL_MAX),
      maxWaitMs: config.NORTH_STATEMENT_TIMEOUT_MS,
    },
  });
  try {
    await signIn?.ready();
  } catch (error) {
    await runtime.close();
    await limiter.close();
    throw new CliError(
      `the authorization server could not start: ${describeError(error).errorType}`,
    );
  }
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer(app.fetch, { port, hostname: host });
  } catch (error) {
    await runtime.close();
    await limiter.close();
    throw new CliError(`cannot listen on ${host}:${port}: ${(error as Error).message}`);
  }
  const url = `${localUrl}/mcp`;
  // Whether Bun's allocator keeps freed pages (decision 046): set by the command that starts us.
  logger.info(
    {
      url,
      limiter: limiter.status().backend,
      allocatorKeepsPages: allocatorKeepsPages(config.MIMALLOC_PURGE_DELAY),
    },
    "North is listening",
  );
  warnMaintenanceOff(config, runtime, embedder, logger);
  const stopPurge = startPurgeTimer(config, runtime.maintenance?.db, logger);
  const stopBackfill =
    embedder && runtime.maintenance
      ? startEmbeddingBackfill({
          db: runtime.maintenance.db,
          provider: embedder,
          logger,
          intervalMs: config.NORTH_EMBEDDINGS_BACKFILL_MS,
        })
      : async () => {};
  const drainMs = config.NORTH_DRAIN_TIMEOUT_MS;
  onShutdown(logger, [
    {
      // New connections are refused at once; calls in flight get drainMs to finish.
      name: "http",
      run: async () => {
        logger.info({ inFlight: server.inFlight(), drainMs }, "draining calls in flight");
        await server.close(drainMs);
        const cut = server.inFlight();
        if (cut > 0) logger.warn({ cut }, "calls still in flight after the drain were cut off");
      },
      timeoutMs: drainMs + 2_000,
    },
    ...closingSteps(limiter, runtime, [stopPurge, stopBackfill]),
  ]);
  return { url, issuer, runtime };
}

/** `north serve --stdio`: MCP on stdin/stdout for the principal of `NORTH_TOKEN`; logs on stderr. */
export async function serveStdio(config: NorthConfig) {
  const logger = createLogger({ level: config.LOG_LEVEL, destination: "stderr" });
  survivingLateSocketErrors(logger);
  const token = config.NORTH_TOKEN?.trim();
  if (!token) throw new CliError("NORTH_TOKEN is not set: serve --stdio authenticates with it");
  const embedder = embedderFor(config, logger);
  const runtime = await openApp(config, { signIn: false });
  const principal = await principalForToken(runtime.app.db, token);
  if (!principal) {
    await runtime.close();
    throw new CliError("NORTH_TOKEN is invalid, expired or revoked");
  }
  const limiter = limiterFor(config, logger);
  const runId = `stdio:${randomUUID()}`;
  // The composition root of stdio: each capability built once, with what it needs.
  const capabilities = createCapabilities({
    embedder,
    recallTokenBudget: config.NORTH_RECALL_TOKEN_BUDGET,
  });
  const fingerprint = createFingerprinter(runtime.auditKey);
  const build = () =>
    createMcpServer(
      principal,
      {
        db: runtime.app.db,
        limiter,
        logger,
        fingerprint,
        now: () => performance.now(),
        capabilities,
        stillAuthorized: async () => (await principalForToken(runtime.app.db, token)) !== null,
      },
      { runId },
    );
  warnMaintenanceOff(config, runtime, undefined, logger);
  const stopPurge = startPurgeTimer(config, runtime.maintenance?.db, logger);
  const meter = { db: runtime.app.db, limiter, logger };
  const connection = serveMcpStdio(build, {
    admit: () => meterMessage(principal, meter),
    onclose: () => void stop("stdio closed"),
  });
  const stop = onShutdown(logger, [
    { name: "mcp", run: () => connection.close(), timeoutMs: 2_000 },
    ...closingSteps(limiter, runtime, [stopPurge]),
  ]);
  process.stdin.on("end", () => void stop("stdio closed"));
  logger.info({ organizationId: principal.organizationId }, "North is serving on stdio");
}

/**
 * `bun run start`: the local install in one command. Embedded PostgreSQL under `.north/`,
 * migrated and provisioned, a local workspace, manager and token, then HTTP on 127.0.0.1:7410,
 * with everything needed to connect printed once it answers.
 */
export async function start(config: NorthConfig, flags: ServeFlags) {
  if (config.DATABASE_URL || config.DATABASE_APP_URL) {
    throw new CliError(
      "start runs the local embedded database; with DATABASE_URL use migrate, provision and serve",
    );
  }
  const logger = createLogger({ level: config.LOG_LEVEL, destination: "stderr" });
  const { url, issuer, runtime } = await serveHttp(config, flags, { logger });
  const publicMcp = `${issuer}/mcp`;
  const local = runtime.local;
  if (!local) throw new Error("start without a local database");
  const owner = connectDatabase(local.database.ownerUrl, { max: 1 });
  const workspace = await ensureLocalWorkspace(local.home, local.state, owner.db, runtime.app.db);
  await owner.close();

  const bundle = path.join(repositoryRoot(), "dist", "north.mjs");
  const desktop = {
    mcpServers: {
      north: {
        command: "node",
        args: [bundle, "serve", "--stdio"],
        env: { NORTH_TOKEN: workspace.token, NORTH_HOME: local.home },
      },
    },
  };
  const lines = [
    "",
    "North is running (Ctrl-C stops it, and its PostgreSQL unless another North process, such as a Claude Desktop session, still uses it).",
    "",
    `  MCP URL  ${url}`,
    `  Token    ${workspace.token}`,
    `           ${workspace.minted ? "new token, saved" : "kept"} in ${tokenPath(local.home)} (mode 0600)`,
    "",
    "Claude Code, with the token:",
    `  claude mcp add --transport http north ${url} --header "Authorization: Bearer ${workspace.token}"`,
    "",
    "Or sign in with OAuth (North is its own authorization server; without a firm IdP, paste the token on its sign-in page):",
    `  Claude Code    claude mcp add --transport http north ${publicMcp}   then /mcp in Claude Code to sign in`,
    `  MCP Inspector  npx @modelcontextprotocol/inspector  → Streamable HTTP, ${publicMcp}, Open Auth Settings › Quick OAuth Flow`,
    `                 (set NORTH_ALLOWED_ORIGINS to the Inspector's origin, e.g. http://localhost:6274)`,
    `  claude.ai, Claude Desktop, Cowork connectors need NORTH_PUBLIC_URL on https (a reverse proxy or`,
    `                 tunnel to this port), then Settings › Connectors › Add custom connector › <NORTH_PUBLIC_URL>/mcp`,
    "",
    "Claude Desktop (Settings › Developer › Edit Config; runs on plain Node, built by bun run build):",
    JSON.stringify(desktop, null, 2)
      .split("\n")
      .map((line) => `  ${line}`)
      .join("\n"),
    "",
    `Admin console:  ${url.replace(/\/mcp$/, "/admin")}  (sign in with the token above)`,
    "",
    `MCP Inspector:  npx @modelcontextprotocol/inspector  → Streamable HTTP, ${url}, header Authorization: Bearer <token>`,
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  process.stdout.write(`READY ${url}\n`);
}
