export { type AdminAppDeps, buildAdminApp } from "./app.ts";
export type { ConsoleLogger } from "./errors.ts";
export { CSRF_FIELD, SESSION_COOKIE, type SessionTimeouts, signIn } from "./session.ts";
export { type ConsoleSignInOptions, openConsoleSessionForMember } from "./sso.ts";
