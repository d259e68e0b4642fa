import type { Entry } from "../../support/catalogue.ts";
import * as attacks from "./attacks.ts";
import * as delivery from "./delivery.ts";
import * as plugin from "./plugin.ts";
import * as tierA from "./tier-a.ts";
import * as words from "./words.ts";

/**
 * The host suites of issue 22 (SPEC §3b): what the real Claude Code CLI delivers to the model,
 * the words' limits, the plugin and the desktop extension, the Tier A harness. One file per
 * concern; scripts/acceptance-mutations.ts gathers them.
 */
const parts = [delivery, words, plugin, tierA, attacks];

export const SUITES: readonly string[] = parts.flatMap((part) => part.SUITES);
export const MUTATIONS: readonly Entry[] = parts.flatMap((part) => part.MUTATIONS);
