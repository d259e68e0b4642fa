export { type AdminAppDeps, buildAdminApp } from "./app.ts";
export { SESSION_COOKIE, signIn } from "./session.ts";
