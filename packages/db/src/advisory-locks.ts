/**
 * Every PostgreSQL advisory-lock key North takes, in one place, so two of them can never be the
 * same number by accident. Keys are in North's own range (7,410,000 upward: its default port).
 */
export const ADVISORY_LOCKS = {
  /** `north migrate`: one migrator at a time per database (a session lock, migrate.ts). */
  migrate: 7_410_001,
  /** `north provision`: concurrent runs queue instead of racing on CREATE ROLE (provision.ts). */
  provision: 7_410_002,
  /**
   * Identical remembers serialised: the seed of `hashtextextended(identity, seed)`, a
   * transaction lock per memory identity (memories/remember.ts, decision 019).
   */
  rememberIdentitySeed: 7_410_005,
} as const;
