import { html } from "hono/html";
import { layout } from "./layout.ts";

/** What the browser sees when a console request fails: no detail, only the id to report. */
export function errorPage(requestId: string) {
  return layout(
    "Something went wrong",
    html`<p class="notice error" role="alert">Something went wrong with this request, and nothing
      more is shown here. If it keeps happening, give your operator this request id:
      <code data-request-id>${requestId}</code></p>
      <p><a href="/admin/profiles">Back to the console</a></p>`,
  );
}

/** A POST whose CSRF token is missing or not this session's (SPEC §8). */
export function forbiddenFormPage() {
  return layout(
    "Form refused",
    html`<p class="notice error" role="alert">This form did not come from your current console
      session, so nothing was changed. Reload the page and try again.</p>
      <p><a href="/admin/profiles">Back to the console</a></p>`,
  );
}

export function notFoundPage() {
  return layout(
    "Not found",
    html`<p class="notice error" role="alert">There is no such page in the console: the
      address may be mistyped, or what it pointed to no longer exists.</p>
      <p><a href="/admin/members">Back to the console</a></p>`,
  );
}
