import { Hono } from "hono";
import type { BrowserSessions } from "../browser-session.ts";
import { messagePage } from "../pages.ts";
import type { SignInEnv } from "./flow.ts";

/**
 * `POST /sign-out` of the authorization server's browser session: on a shared browser, nobody
 * can consent another client in the session's remaining minutes.
 */
export function buildSignOutRoutes(deps: { sessions: BrowserSessions }) {
  const app = new Hono<SignInEnv>();

  app.post("/sign-out", async (c) => {
    // The session ends on the server; the browser's cookie then names nothing.
    await deps.sessions.end(c.req.raw.headers);
    return c.html(
      messagePage(
        "Signed out",
        "You are signed out of North in this browser.",
        "Connections you allowed stay connected; your manager can list and revoke them.",
      ),
    );
  });

  return app;
}
