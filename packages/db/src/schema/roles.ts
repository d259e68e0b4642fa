import { pgRole } from "drizzle-orm/pg-core";

/**
 * Roles are created by provisioning (and, for the two NOLOGIN roles, by the first custom
 * migration so policies can name them); drizzle-kit must never create or drop them.
 */
export const appRole = pgRole("app_role").existing();
