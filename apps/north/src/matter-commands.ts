import type { Command, Flags } from "./command.ts";
import { print } from "./command.ts";
import type { NorthConfig } from "./config.ts";
import {
  matterCreate,
  matterHold,
  matterImport,
  matterList,
  matterMembership,
  matterRelease,
  matterShow,
} from "./matters.ts";

/** `north matter …` (SPEC §5a; apps/north/src/matters.ts). */
export function matterCommands(): Record<string, Command> {
  const text = (value: object) => JSON.stringify(value, null, 2);
  const membership = (command: "team add" | "team remove" | "screen add" | "screen remove") => ({
    flags: ["org", "ref", "user", ...(command === "screen add" ? ["reason" as const] : [])],
    args: 0,
    run: async (config: NorthConfig, flags: Flags, _a: string[], json: boolean) => {
      const result = await matterMembership(config, command, flags);
      print(json, result, () => (result.changed ? `${command}: done` : `${command}: no change`));
    },
  });
  return {
    "matter create": {
      flags: ["org", "ref", "name", "client", "restricted"],
      args: 0,
      run: async (config, flags, _a, json) => {
        const result = await matterCreate(config, flags);
        print(json, result, () => result.id);
      },
    },
    "matter list": {
      flags: ["org"],
      args: 0,
      run: async (config, flags, _a, json) => {
        const result = await matterList(config, flags);
        print(json, result, () =>
          result.matters
            .map(
              (m) =>
                `${m.reference}\t${m.access}\tteam ${m.team}\tscreens ${m.screens}\t${m.hold ? "held" : "-"}\t${m.memories} memories\t${m.name}`,
            )
            .join("\n"),
        );
      },
    },
    "matter show": {
      flags: ["org", "ref"],
      args: 0,
      run: async (config, flags, _a, json) => {
        const result = await matterShow(config, flags);
        print(json, result, () => text(result));
      },
    },
    "matter team add": membership("team add") as Command,
    "matter team remove": membership("team remove") as Command,
    "matter screen add": membership("screen add") as Command,
    "matter screen remove": membership("screen remove") as Command,
    "matter hold": {
      flags: ["org", "ref", "reason"],
      args: 0,
      run: async (config, flags, _a, json) => {
        const result = await matterHold(config, flags);
        print(json, result, () => `held since ${result.hold.since}`);
      },
    },
    "matter release": {
      flags: ["org", "ref"],
      args: 0,
      run: async (config, flags, _a, json) => {
        const result = await matterRelease(config, flags);
        print(json, result, () => (result.released ? "released" : "was not held"));
      },
    },
    "matter import": {
      flags: ["org", "file"],
      args: 0,
      run: async (config, flags, _a, json) => {
        const result = await matterImport(config, flags);
        print(
          json,
          result,
          () =>
            `${result.matters} matters: ${result.created} created, ${result.updated} updated, ${result.unchanged} unchanged`,
        );
      },
    },
  };
}
