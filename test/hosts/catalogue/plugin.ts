import type { Entry } from "../../../scripts/acceptance-mutations.ts";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [];

export const MUTATIONS: readonly Entry[] = [];
