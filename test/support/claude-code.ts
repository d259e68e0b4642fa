import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { createMetadataFetch } from "@north/mcp-server";
import type { Browser, Page } from "playwright-core";
import { ROOT } from "./processes.ts";
import { selfSignedCertificate } from "./tls.ts";

/** Claude Code's client id against every MCP server that supports metadata documents. */
export const CLAUDE_CODE_CLIENT_ID = "https://claude.ai/oauth/claude-code-client-metadata";

/**
 * Claude Code's Client ID Metadata Document as claude.ai publishes it: a public client whose
 * redirect URIs are loopback without a port (the CLI listens on a port it picks, RFC 8252 §7.3).
 */
export const CLAUDE_CODE_DOCUMENT = {
  client_id: CLAUDE_CODE_CLIENT_ID,
  client_name: "Claude Code",
  redirect_uris: ["http://localhost/callback", "http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

/** How the stand-in host answers one path: a response, a dropped connection, or nothing ever. */
export type HostAnswer =
  | { status: number; headers?: Record<string, string>; body?: string }
  | "reset"
  | "hang";

/** A stand-in for a metadata document's host (claude.ai by default), on 127.0.0.2. */
export interface MetadataHost {
  hostname: string;
  /** How the host answers `path` from now on (unknown paths get 404). */
  answer(path: string, answer: HostAnswer): void;
  /** Serves `document` as JSON at `path`. */
  serve(path: string, document: Record<string, unknown>): void;
  /**
   * The transport North uses: the real one, with the test's DNS (the hostname is 127.0.0.2,
   * the one special address it lets through) and this server's port in place of 443, so
   * client ids keep their real form (`https://claude.ai/oauth/…`).
   */
  fetch: ReturnType<typeof createMetadataFetch>;
  /** The paths asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

const HOST_ADDRESS = "127.0.0.2";

/** Starts a {@link MetadataHost}; Claude Code's document is served at its real path. */
export async function startMetadataHost(
  hostname = "claude.ai",
  options: { timeoutMs?: number } = {},
): Promise<MetadataHost> {
  const { cert, key } = selfSignedCertificate(hostname);
  const answers = new Map<string, HostAnswer>();
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createHttpsServer({ cert, key }, (req, res) => {
    requests.push(req.url ?? "");
    const answer = answers.get(req.url ?? "") ?? { status: 404 };
    if (answer === "hang") return;
    if (answer === "reset") {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? "");
  });
  server.on("secureConnection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, HOST_ADDRESS, resolve));
  const port = (server.address() as AddressInfo).port;
  const transport = createMetadataFetch({
    timeoutMs: options.timeoutMs,
    lookup: async (name) => (name === hostname ? [{ address: HOST_ADDRESS, family: 4 }] : []),
    allowAddress: (ip) => ip === HOST_ADDRESS,
    tlsCa: cert,
  });
  const serve = (path: string, document: Record<string, unknown>) =>
    answers.set(path, {
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(document),
    });
  serve(new URL(CLAUDE_CODE_CLIENT_ID).pathname, CLAUDE_CODE_DOCUMENT);
  return {
    hostname,
    answer: (path, answer) => answers.set(path, answer),
    serve,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname === hostname && url.port === "") url.port = String(port);
      return transport(url, init);
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The Claude Code release this suite pins (root devDependency, installed with its binary). */
export const CLAUDE_CODE_VERSION = "2.1.197";
const CLAUDE_BIN = path.join(ROOT, "node_modules/.bin/claude");

/** One finished run of the CLI, its output drained. */
export interface ClaudeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A run still going: its output so far, and its end. */
export interface ClaudeProcess {
  child: ChildProcess;
  output(): string;
  done: Promise<ClaudeRun>;
  stop(): Promise<void>;
}

/** An interactive session on a pseudo-terminal: keys typed into it, and what it has shown. */
export interface ClaudeSession extends ClaudeProcess {
  type(keys: string): void;
  /**
   * Waits until what the session has shown matches `pattern`, its escape sequences and
   * whitespace removed (the interface moves its cursor between words, so spaces do not survive).
   */
  waitForScreen(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** Terminal output as plain text without whitespace or escape sequences. */
const screenText = (output: string) => stripVTControlCharacters(output).replace(/\s+/g, "");

/** One server's OAuth state as Claude Code keeps it in `~/.claude/.credentials.json`. */
export interface ClaudeOAuthEntry {
  serverName: string;
  serverUrl: string;
  clientId?: string;
  accessToken: string;
  refreshToken?: string;
  expiresAt?: number;
  redirectUri?: string;
  [key: string]: unknown;
}

/** The real Claude Code CLI, in a private HOME, with a browser that only records URLs. */
export interface ClaudeCode {
  home: string;
  run(args: string[], timeoutMs?: number): Promise<ClaudeRun>;
  /**
   * Starts `claude …` on a pseudo-terminal (util-linux `script`): `claude mcp login` refuses to
   * run its browser flow when stdin is not a terminal.
   */
  start(args: string[]): ClaudeProcess;
  /**
   * An interactive session (`claude` with no `-p`), its first-run dialogs answered in
   * `~/.claude.json` the way a person answers them once: onboarding done, the dummy API key
   * approved, the working directory trusted.
   */
  interactive(args: string[]): Promise<ClaudeSession>;
  /** Waits for the next URL the CLI asks its browser to open (the authorization URL). */
  nextBrowserUrl(timeoutMs?: number): Promise<URL>;
  /** Every URL the CLI has asked its browser to open so far. */
  browserUrls(): Promise<URL[]>;
  /** Its stored MCP OAuth state, by its own key. */
  oauthEntries(): Promise<ClaudeOAuthEntry[]>;
  /** Rewrites its stored MCP OAuth state (e.g. to make an access token look expired). */
  editOAuthEntries(edit: (entry: ClaudeOAuthEntry) => void): Promise<void>;
  close(): Promise<void>;
}

/** Where Claude Code's model lives: the test's stand-in (the default), or a real API. */
export interface ClaudeCodeOptions {
  /** `ANTHROPIC_BASE_URL`: the stand-in's URL, or a real endpoint; unset, Anthropic's API. */
  messagesApi?: string;
  /** `ANTHROPIC_API_KEY`; a dummy one by default (the stand-in ignores it). */
  apiKey?: string;
  /** Variables added to every run (those a plugin's `.mcp.json` expands, say). */
  env?: Record<string, string>;
}

/**
 * Claude Code as a person runs it, isolated: a private HOME and working directory, a dummy API
 * key, `ANTHROPIC_BASE_URL` at the test's stand-in Messages API, no auto-update or other
 * traffic, and `BROWSER` a script that appends the URL to a file (the test's Chromium opens
 * it). Throws — the suite fails, never skips — when the pinned CLI is not installed. The Tier A
 * run (`bun run test:tier-a`) gives it a real key and no stand-in instead.
 */
export async function startClaudeCode(options: ClaudeCodeOptions): Promise<ClaudeCode> {
  if (!existsSync(CLAUDE_BIN)) {
    throw new Error(`Claude Code is not installed at ${CLAUDE_BIN}: run bun install`);
  }
  const version = execFileSync(CLAUDE_BIN, ["--version"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 30_000,
  });
  if (!version.includes(CLAUDE_CODE_VERSION)) {
    throw new Error(`expected Claude Code ${CLAUDE_CODE_VERSION}, found ${version.trim()}`);
  }
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("util-linux `script` is needed to give `claude mcp login` a terminal");
  }
  const home = await mkdtemp(path.join(tmpdir(), "north-claude-code-"));
  const work = path.join(home, "work");
  const urls = path.join(home, "browser-urls.txt");
  const browser = path.join(home, "browser.sh");
  await writeFile(urls, "");
  await writeFile(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${urls}'\n`);
  await chmod(browser, 0o755);
  await mkdir(work);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    TERM: "dumb",
    LANG: "C.UTF-8",
    BROWSER: browser,
    ANTHROPIC_API_KEY: options.apiKey ?? "sk-ant-test-dummy",
    ...(options.messagesApi ? { ANTHROPIC_BASE_URL: options.messagesApi } : {}),
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    ...options.env,
  };
  const children = new Set<ChildProcess>();
  let seenUrls = 0;

  const launch = (command: string, args: string[]): ClaudeProcess => {
    // Its own process group, so stopping it stops the CLI under `script` too.
    const child = spawn(command, args, { cwd: work, env, stdio: "pipe", detached: true });
    children.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    const done = new Promise<ClaudeRun>((resolve) => {
      child.on("error", (error) => {
        stderr += String(error);
      });
      child.on("close", (code) => {
        children.delete(child);
        resolve({ code, stdout, stderr });
      });
    });
    return {
      child,
      output: () => stdout + stderr,
      done,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null && child.pid) {
          process.kill(-child.pid, "SIGTERM");
        }
        await done;
      },
    };
  };
  const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;
  const start = (args: string[]) =>
    launch("script", ["-qefc", [CLAUDE_BIN, ...args].map(quote).join(" "), "/dev/null"]);
  const credentialsFile = path.join(home, ".claude", ".credentials.json");
  const readCredentials = async () =>
    JSON.parse(await readFile(credentialsFile, "utf8").catch(() => "{}")) as {
      mcpOAuth?: Record<string, ClaudeOAuthEntry>;
    };

  const configFile = path.join(home, ".claude.json");
  const interactive = async (args: string[]): Promise<ClaudeSession> => {
    const config = JSON.parse(await readFile(configFile, "utf8").catch(() => "{}"));
    config.hasCompletedOnboarding = true;
    config.theme = "dark";
    config.customApiKeyResponses = { approved: [env.ANTHROPIC_API_KEY?.slice(-20)], rejected: [] };
    config.projects = { ...config.projects, [work]: { hasTrustDialogAccepted: true } };
    await writeFile(configFile, JSON.stringify(config));
    const session = start(args);
    return {
      ...session,
      type: (keys) => session.child.stdin?.write(keys),
      async waitForScreen(pattern, timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        while (!pattern.test(screenText(session.output()))) {
          if (Date.now() > deadline) {
            throw new Error(`never showed ${pattern}; showed:\n${screenText(session.output())}`);
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      },
    };
  };

  return {
    home,
    start,
    interactive,
    async run(args, timeoutMs = 60_000) {
      const running = launch(CLAUDE_BIN, args);
      running.child.stdin?.end();
      const timer = setTimeout(() => running.stop(), timeoutMs);
      try {
        return await running.done;
      } finally {
        clearTimeout(timer);
      }
    },
    async nextBrowserUrl(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const lines = (await readFile(urls, "utf8")).split("\n").filter(Boolean);
        const next = lines[seenUrls];
        if (next) {
          seenUrls += 1;
          return new URL(next);
        }
        if (Date.now() > deadline) throw new Error("Claude Code never opened a browser");
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async browserUrls() {
      return (await readFile(urls, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((line) => new URL(line));
    },
    async oauthEntries() {
      return Object.values((await readCredentials()).mcpOAuth ?? {});
    },
    async editOAuthEntries(edit) {
      const credentials = await readCredentials();
      for (const entry of Object.values(credentials.mcpOAuth ?? {})) edit(entry);
      await writeFile(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
    },
    async close() {
      for (const child of children) if (child.pid) process.kill(-child.pid, "SIGKILL");
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * `claude mcp add` North's MCP endpoint as a user-scoped HTTP server named `north`; `extra`
 * adds options (`--header "Authorization: Bearer …"` for a host that holds an API token).
 */
export async function addNorth(
  claude: ClaudeCode,
  mcpUrl: string,
  extra: string[] = [],
): Promise<void> {
  const added = await claude.run([
    "mcp",
    "add",
    "--transport",
    "http",
    "-s",
    "user",
    "north",
    mcpUrl,
    // Last: `--header` takes every argument after it.
    ...extra,
  ]);
  if (added.code !== 0) throw new Error(`claude mcp add failed: ${added.stderr}`);
}

/**
 * Claude Code's browser step, in a fresh Chromium context: opens the next URL the CLI asked its
 * browser to open (its authorization URL), runs `steps` on North's pages, and waits until the
 * CLI's own loopback listener has received the code. Returns the URL Claude Code built.
 */
export async function authorizeInChromium(
  claude: ClaudeCode,
  browser: Browser,
  steps: (page: Page) => Promise<void>,
  timeoutMs?: number,
): Promise<URL> {
  const authorizeUrl = await claude.nextBrowserUrl(timeoutMs);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(authorizeUrl.toString());
    await steps(page);
    await page.waitForURL(/^http:\/\/localhost:\d+\/callback\?code=/, { timeout: 15_000 });
    return authorizeUrl;
  } finally {
    await context.close();
  }
}
