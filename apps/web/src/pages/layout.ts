import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

type Content = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = `
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
  header { background: #1d2330; color: #fff; padding: .8rem 1.5rem; display: flex; gap: 1.5rem; align-items: center; }
  header a { color: #cfd6e4; text-decoration: none; } header a[aria-current] { color: #fff; font-weight: 600; }
  header form { margin-left: auto; } main { padding: 1.5rem; max-width: 72rem; }
  table { border-collapse: collapse; width: 100%; background: #fff; margin-bottom: 1.5rem; }
  th, td { text-align: left; vertical-align: top; padding: .45rem .6rem; border-bottom: 1px solid #e3e6eb; }
  th { background: #eef0f4; font-weight: 600; } td.answer { white-space: pre-wrap; }
  .notice { background: #fff7e0; border: 1px solid #f0d58c; padding: .6rem .8rem; margin-bottom: 1rem; }
  .muted { color: #6b7385; } .tag { font-size: .8em; padding: .05rem .35rem; border-radius: .25rem; background: #e8ebf2; }
  form.inline { display: inline; } input { padding: .3rem .4rem; } button { padding: .3rem .7rem; }
`;

export type Section = "profiles" | "memories" | "audit";

/** The page frame: navigation for signed-in managers, plain otherwise. */
export function layout(title: string, body: Content, section?: Section) {
  const link = (to: Section, label: string) =>
    html`<a href="/admin/${to}" ${section === to ? html`aria-current="page"` : ""}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title} · North admin</title>
    <style>${STYLE}</style>
  </head>
  <body>
    <header>
      <strong>North</strong>
      ${
        section
          ? html`${link("profiles", "Working profiles")} ${link("memories", "Memories")}
              ${link("audit", "Audit")}
              <form method="post" action="/admin/logout"><button type="submit">Sign out</button></form>`
          : ""
      }
    </header>
    <main>
      <h1>${title}</h1>
      ${body}
    </main>
  </body>
</html>`;
}
