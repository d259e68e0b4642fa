import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { CSRF_FIELD } from "../session.ts";

type Content = HtmlEscapedString | Promise<HtmlEscapedString>;

export type Section = "members" | "profiles" | "memories" | "matters" | "connections" | "audit";

/** A signed-in page: which section it is, and the session's CSRF token for its forms. */
export interface Nav {
  section: Section;
  csrf: string;
}

/** The hidden field every state-changing form carries (SPEC §8). */
export const csrfField = (csrf: string) =>
  html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />`;

/** The page frame: navigation and sign-out for signed-in managers, plain otherwise. */
export function layout(title: string, body: Content, nav?: Nav) {
  const link = (to: Section, label: string) =>
    html`<a href="/admin/${to}" ${nav?.section === to ? html`aria-current="page"` : ""}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title} · North admin</title>
    <link rel="stylesheet" href="/admin/console.css" />
    <script src="/admin/console.js" defer></script>
  </head>
  <body>
    <a class="skip" href="#content">Skip to content</a>
    <header>
      <span class="brand">North</span>
      ${
        nav
          ? html`<nav aria-label="Console"><ul>
              <li>${link("members", "Members")}</li>
              <li>${link("profiles", "Working profiles")}</li>
              <li>${link("memories", "Memories")}</li>
              <li>${link("matters", "Matters")}</li>
              <li>${link("connections", "Connected apps")}</li>
              <li>${link("audit", "Audit")}</li>
            </ul></nav>
            <form method="post" action="/admin/logout">${csrfField(nav.csrf)}<button type="submit">Sign out</button></form>`
          : ""
      }
    </header>
    <main id="content">
      <h1>${title}</h1>
      ${body}
    </main>
  </body>
</html>`;
}
