import type { parseArgs } from "node:util";
import type { NorthConfig } from "./config.ts";

/** The shape of the CLI's command table (main.ts) and the flags every command may take. */

export const OPTIONS = {
  json: { type: "boolean", default: false },
  org: { type: "string" },
  language: { type: "string" },
  user: { type: "string" },
  email: { type: "string" },
  role: { type: "string" },
  manager: { type: "boolean", default: false },
  scope: { type: "string", multiple: true },
  expires: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  stdio: { type: "boolean", default: false },
  full: { type: "boolean", default: false },
  issuer: { type: "string" },
  "client-id": { type: "string" },
  "client-secret-file": { type: "string" },
  domain: { type: "string", multiple: true },
  ref: { type: "string" },
  name: { type: "string" },
  client: { type: "string" },
  restricted: { type: "boolean", default: false },
  reason: { type: "string" },
  file: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

export type Flags = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>["values"];
export type Flag = Exclude<keyof typeof OPTIONS, "json" | "help">;

export interface Command {
  /** Flags besides --json and --help; any other is refused before anything runs. */
  flags: readonly Flag[];
  /** Positional arguments after the command words (e.g. NAME, ID). */
  args: number;
  run(config: NorthConfig, flags: Flags, args: string[], json: boolean): Promise<void>;
}

export function print(json: boolean, value: object, human: () => string) {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
}
