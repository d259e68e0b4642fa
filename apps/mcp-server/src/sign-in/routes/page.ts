import { Hono } from "hono";
import { messagePage, SIGN_IN_STYLESHEET, signInPage } from "../pages.ts";
import type { SignInEnv } from "./flow.ts";

/**
 * The sign-in page (email, or an API token) for the authorization request in its query, and
 * the pages' stylesheet. Without a request there is nothing to sign in to.
 */
export function buildPageRoutes() {
  const app = new Hono<SignInEnv>();

  app.get("/style.css", (c) => {
    c.header("Content-Type", "text/css; charset=utf-8");
    return c.body(SIGN_IN_STYLESHEET);
  });

  app.get("/", (c) => {
    const query = new URL(c.req.url).search.slice(1);
    if (!query) {
      return c.html(
        messagePage(
          "Nothing to sign in to",
          "This page is reached from a Claude app that connects to North.",
          "Add North as a connector in claude.ai, Claude Desktop or Cowork, or run /mcp in Claude Code.",
        ),
        400,
      );
    }
    return c.html(signInPage({ continueQuery: query }));
  });

  return app;
}
