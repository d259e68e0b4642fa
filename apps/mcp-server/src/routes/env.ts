import type { Principal } from "../principal.ts";

/**
 * What the app's middleware gives each route: the request id (every route) and, behind the
 * authentication app.ts puts in front of `/mcp` and `/manifest`, the principal.
 */
export type AppEnv = { Variables: { requestId: string; principal: Principal } };
