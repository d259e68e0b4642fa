#!/usr/bin/env bun
/**
 * `north`: the operator CLI (SPEC §2). Every command prints one JSON object with `--json`;
 * errors go to stderr as one line with a non-zero exit, and arguments are checked before
 * anything is written.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import {
  memberAdd,
  migrate,
  orgCreate,
  provision,
  purge,
  tokenCreate,
  tokenList,
  tokenRevoke,
} from "./operator.ts";
import { CliError } from "./runtime.ts";
import { serveHttp, serveStdio, start } from "./serve.ts";

const USAGE = `usage: north <command> [--json]
  migrate                         apply migrations (DATABASE_URL, else the local .north database)
  provision                       create or upgrade roles, grants and functions
  org create NAME                 print {"id"}
  member add --org ID --email E [--manager]
  token create --org ID --user ID [--scope S]... [--expires 30d|12h|never]
  token list --org ID
  token revoke ID
  purge                           remove the bodies of expired memories (audited)
  serve [--port N] [--host H] [--stdio]
  start [--port N] [--host H]     local install on embedded PostgreSQL (bun run start)`;

function print(json: boolean, value: Record<string, unknown>, human: () => string) {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
}

function port(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError("--port must be 0–65535");
  return n;
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: "boolean", default: false },
      org: { type: "string" },
      user: { type: "string" },
      email: { type: "string" },
      manager: { type: "boolean", default: false },
      scope: { type: "string", multiple: true },
      expires: { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      stdio: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [command, sub, arg] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  const json = values.json ?? false;
  switch (
    `${command}${sub && ["create", "add", "list", "revoke"].includes(sub) ? ` ${sub}` : ""}`
  ) {
    case "migrate":
      return print(json, await migrate(config), () => "migrated");
    case "provision":
      return print(json, await provision(config), () => "provisioned");
    case "org create": {
      const result = await orgCreate(config, arg);
      return print(json, result, () => result.id);
    }
    case "member add": {
      const result = await memberAdd(config, values);
      return print(json, result, () => `${result.userId} (${result.role})`);
    }
    case "token create": {
      const result = await tokenCreate(config, values);
      return print(json, result, () =>
        [
          result.token,
          `id ${result.id}, scopes ${result.scopes.join(" ")}, expires ${result.expiresAt ?? "never"}`,
          "Shown once: store it now.",
        ].join("\n"),
      );
    }
    case "token list": {
      const result = await tokenList(config, values);
      return print(
        json,
        result,
        () =>
          result.tokens
            .map(
              (t) =>
                `${t.id} user ${t.userId} [${t.scopes.join(" ")}] expires ${t.expiresAt ?? "never"}${t.revokedAt ? " REVOKED" : ""}`,
            )
            .join("\n") || "no tokens",
      );
    }
    case "token revoke": {
      const result = await tokenRevoke(config, sub === "revoke" ? arg : undefined);
      return print(json, result, () => `revoked ${result.id}`);
    }
    case "purge": {
      const result = await purge(config);
      return print(
        json,
        result,
        () => `purged ${result.purged} memories in ${result.organizations} organizations`,
      );
    }
    case "serve":
      if (values.stdio) return serveStdio(config);
      await serveHttp(config, { port: port(values.port), host: values.host });
      return;
    case "start":
      return start(config, { port: port(values.port), host: values.host });
    default:
      throw new CliError(`unknown command: ${positionals.join(" ")}\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // By name, not instanceof, so the check holds the same in the bundle built for Node.
  const known =
    (error as Error | undefined)?.name === "CliError" ||
    (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
  const message = known
    ? (error as Error).message
    : `internal error (${(error as Error).name ?? "unknown"})`;
  process.stderr.write(`north: ${message.split("\n")[0]}\n`);
  if (!known && process.env.NORTH_DEBUG) process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(known ? 2 : 1);
});
