import type { Entry } from "../../support/catalogue.ts";
import * as claudeCode from "./claude-code.ts";
import * as definers from "./definers.ts";
import * as grants from "./grants.ts";
import * as idp from "./idp.ts";
import * as metadata from "./metadata.ts";
import * as metering from "./metering.ts";
import * as registration from "./registration.ts";
import * as review from "./review.ts";

/**
 * The sign-in attack suites of issue 21 (SPEC §3a's last bullets) and, for each check, the
 * product mutation that turns it red. One file per concern, beside the suites it guards, so a
 * change to one concern edits one file; scripts/acceptance-mutations.ts gathers them.
 */
const parts = [grants, idp, registration, metadata, metering, definers, claudeCode, review];

export const SUITES: readonly string[] = parts.flatMap((part) => part.SUITES);
export const MUTATIONS: readonly Entry[] = parts.flatMap((part) => part.MUTATIONS);
