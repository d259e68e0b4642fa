/**
 * The `oauth` workload of `bun run bench` (BENCH_ONLY=oauth): the same tool call with an API
 * token and with an OAuth access token from North's own authorization server, in the same run
 * against the same server, which runs the product's auth path (`createSignIn`,
 * `createAuthResolver`). The access token is obtained over HTTP the way a browser would, without
 * one: dynamic client registration, an authorization request with PKCE S256 and the MCP
 * resource, sign-in with an API token, consent, and the code exchanged at the token endpoint.
 */
import { createHash, randomBytes } from "node:crypto";
import { createFingerprinter, type Database, freePort } from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createLogger,
  createRateLimiter,
  createSignIn,
  startHttpServer,
} from "@north/mcp-server";

const REDIRECT_URI = "http://127.0.0.1:9/cb";
const SCOPE = "profile:write memory:read memory:write";

/** The cookies a browser would keep for the issuer: name=value pairs, nothing else. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(";", 1)[0] ?? "";
      const at = pair.indexOf("=");
      if (at > 0) this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

const decodeEntities = (text: string) =>
  text
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");

/** The value of a hidden input in a page, as the browser would post it. */
function hiddenInput(page: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page);
  if (!match?.[1]) throw new Error(`the page has no hidden ${name} input`);
  return decodeEntities(match[1]);
}

/**
 * Signs `apiToken`'s member in at `issuer` (`http://127.0.0.1:PORT`) through a freshly
 * registered public client and returns the access token the token endpoint issues.
 */
export async function oauthAccessToken(
  issuer: string,
  apiToken: string,
  clientName: string,
): Promise<string> {
  const jar = new CookieJar();
  const step = async (
    url: string | URL,
    init: { method?: string; form?: Record<string, string>; json?: unknown } = {},
    expected = [200],
  ) => {
    const headers = new Headers({ Origin: issuer });
    const cookie = jar.header();
    if (cookie) headers.set("Cookie", cookie);
    let body: string | undefined;
    if (init.form) {
      headers.set("Content-Type", "application/x-www-form-urlencoded");
      body = new URLSearchParams(init.form).toString();
    } else if (init.json !== undefined) {
      headers.set("Content-Type", "application/json");
      body = JSON.stringify(init.json);
    }
    const target = new URL(url, issuer);
    const response = await fetch(target, {
      method: init.method ?? (body ? "POST" : "GET"),
      headers,
      body,
      redirect: "manual",
    });
    jar.keep(response);
    if (!expected.includes(response.status)) {
      throw new Error(
        `${target.pathname} answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
      );
    }
    return response;
  };
  const location = (response: Response) => new URL(response.headers.get("location") ?? "", issuer);

  const registered = await step(
    "/oauth/oauth2/register",
    {
      json: {
        client_name: clientName,
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    },
    [200, 201],
  );
  const clientId = ((await registered.json()) as { client_id: string }).client_id;

  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL("/oauth/oauth2/authorize", issuer);
  for (const [name, value] of Object.entries({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource: `${issuer}/mcp`,
    state: "x",
  })) {
    authorize.searchParams.set(name, value);
  }

  // Not signed in: the library sends the browser to North's sign-in page.
  const signInPage = location(await step(authorize, {}, [302]));
  await step(signInPage);
  const signedIn = await step(
    "/sign-in/token",
    { form: { continue: signInPage.search.slice(1), token: apiToken } },
    [303],
  );
  // Signed in: back at the authorize endpoint, which asks for consent.
  const consentPage = location(await step(location(signedIn), {}, [302]));
  if (consentPage.pathname !== "/sign-in/consent") {
    throw new Error(`expected the consent page, was sent to ${consentPage.pathname}`);
  }
  const page = await (await step(consentPage)).text();
  const decided = await step(
    "/sign-in/consent",
    {
      form: {
        decision: "allow",
        continue: hiddenInput(page, "continue"),
        csrf: hiddenInput(page, "csrf"),
      },
    },
    [303],
  );
  const code = location(decided).searchParams.get("code");
  if (!code) throw new Error(`consent did not return a code: ${location(decided)}`);

  const tokens = await step("/oauth/oauth2/token", {
    form: {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${issuer}/mcp`,
    },
  });
  const accessToken = ((await tokens.json()) as { access_token?: string }).access_token;
  if (!accessToken) throw new Error("the token endpoint returned no access_token");
  return accessToken;
}

/** What the read workload's SDK clients report: each call's latency (ms), by token position. */
export interface ReadResult {
  errors: number;
  elapsed: number;
  bySlot: number[][];
}

export interface OAuthBenchOptions {
  /** The app pool (app login role), as `north serve` configures it. */
  db: Database;
  auditKey: string;
  /** One API token per client; each member also signs in through OAuth with it. */
  apiTokens: string[];
  seconds: number;
  /**
   * Runs the read workload's clients against `url` for `seconds`, one per token argument; an
   * argument `a,b` alternates between the two tokens call by call.
   */
  readClients(url: string, tokens: string[], seconds: number): Promise<ReadResult>;
}

export interface SideFigures {
  calls: number;
  callsPerSecond: number;
  p50: number;
  p99: number;
}

export interface OAuthBenchFigures {
  api: SideFigures;
  oauth: SideFigures;
  /** 95% bootstrap interval of the p50 difference (OAuth − API), ms. */
  p50DifferenceInterval: [number, number];
  /** The auth resolver alone, in process, one call at a time: µs of wall time and CPU. */
  resolver: Record<"api" | "oauth", { wall: number; cpu: number }>;
}

const pick = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/**
 * A 95% interval for p50(b) − p50(a) by resampling each side's calls (1,000 times): how far
 * the run's own noise could move the difference.
 */
function bootstrapMedianDifference(a: number[], b: number[]): [number, number] {
  const resampledMedian = (values: number[]) => {
    const sample = values.map(() => values[Math.floor(Math.random() * values.length)] ?? 0);
    return pick(
      sample.sort((x, y) => x - y),
      0.5,
    );
  };
  const differences = Array.from(
    { length: 1_000 },
    () => resampledMedian(b) - resampledMedian(a),
  ).sort((x, y) => x - y);
  return [pick(differences, 0.025), pick(differences, 0.975)];
}

/**
 * Starts the real server with North's authorization server on, signs every member in through
 * OAuth, then has each client call `north__working_profile` alternately with its member's API
 * token and access token, call by call, so both sides share the same load and the same
 * moments: on a shared machine, phases of a few seconds each drifted by more than the target.
 * One unmeasured second warms both paths first.
 */
export async function benchOAuth(options: OAuthBenchOptions): Promise<OAuthBenchFigures> {
  const logger = createLogger({ level: "warn" });
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const signIn = createSignIn({
    db: options.db,
    issuer,
    secret: randomBytes(32).toString("hex"),
    fingerprint: createFingerprinter(options.auditKey),
    logger,
  });
  const resolvePrincipal = createAuthResolver(options.db, signIn.oauth);
  const app = buildMcpApp({
    db: options.db,
    resolvePrincipal,
    oauth: signIn.oauth,
    signIn,
    limiter: createRateLimiter({
      writesPerMinute: 1e9,
      readsPerMinute: 1e9,
      protocolRequestsPerMinute: 1e9,
    }),
    logger,
    auditKey: options.auditKey,
  });
  await signIn.ready();
  const server = await startHttpServer(app.fetch, { port, hostname: "127.0.0.1" });
  try {
    const accessTokens: string[] = [];
    for (const [i, token] of options.apiTokens.entries()) {
      accessTokens.push(await oauthAccessToken(issuer, token, `North bench ${i}`));
    }
    const mcpUrl = `${issuer}/mcp`;
    const pairs = options.apiTokens.map((token, i) => `${token},${accessTokens[i]}`);
    await options.readClients(mcpUrl, pairs, 1);
    const run = await options.readClients(mcpUrl, pairs, options.seconds);
    if (run.errors > 0) throw new Error(`${run.errors} calls failed`);
    const figures = (slot: number): SideFigures => {
      const latencies = run.bySlot[slot] ?? [];
      return {
        calls: latencies.length,
        callsPerSecond: latencies.length / run.elapsed,
        p50: pick(latencies, 0.5),
        p99: pick(latencies, 0.99),
      };
    };
    return {
      api: figures(0),
      oauth: figures(1),
      p50DifferenceInterval: bootstrapMedianDifference(run.bySlot[0] ?? [], run.bySlot[1] ?? []),
      resolver: await timeResolver(resolvePrincipal, mcpUrl, {
        api: options.apiTokens[0] ?? "",
        oauth: accessTokens[0] ?? "",
      }),
    };
  } finally {
    await server.close();
  }
}
/** µs per resolve of each token by the product's resolver, alternating rounds of 500. */
async function timeResolver(
  resolve: ReturnType<typeof createAuthResolver>,
  url: string,
  tokens: { api: string; oauth: string },
): Promise<OAuthBenchFigures["resolver"]> {
  const ROUNDS = 4;
  const PER_ROUND = 500;
  const wall = { api: 0, oauth: 0 };
  const cpu = { api: 0, oauth: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 ? (["oauth", "api"] as const) : (["api", "oauth"] as const)) {
      const request = new Request(url, { headers: { authorization: `Bearer ${tokens[side]}` } });
      const started = performance.now();
      const before = process.cpuUsage();
      for (let i = 0; i < PER_ROUND; i++) {
        if (!(await resolve(request))) throw new Error(`the ${side} token did not resolve`);
      }
      const used = process.cpuUsage(before);
      wall[side] += (performance.now() - started) * 1000;
      cpu[side] += used.user + used.system;
    }
  }
  const per = (side: "api" | "oauth") => ({
    wall: wall[side] / (ROUNDS * PER_ROUND),
    cpu: cpu[side] / (ROUNDS * PER_ROUND),
  });
  return { api: per("api"), oauth: per("oauth") };
}
