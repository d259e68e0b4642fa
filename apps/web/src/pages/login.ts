import { html } from "hono/html";
import { layout } from "./layout.ts";

export function loginPage(message?: string) {
  return layout(
    "Sign in",
    html`${message ? html`<p class="notice error" role="alert">${message}</p>` : ""}
      <p>This console is for workspace managers.</p>
      <form method="post" action="/sign-in/email" class="stack">
        <input type="hidden" name="purpose" value="console" />
        <label>Work email <input type="email" name="email" autocomplete="email" required /></label>
        <button type="submit">Continue with your firm's sign-in</button>
      </form>
      <p>Or, for a workspace without a firm sign-in, paste a North token that carries the
        <code>admin</code> scope (<code>north token create … --scope admin</code>).</p>
      <form method="post" action="/admin/login" class="stack">
        <label>Token <input type="password" name="token" autocomplete="off" required /></label>
        <button type="submit">Sign in with the token</button>
      </form>`,
  );
}

export function refusedPage() {
  return layout(
    "Not available",
    html`<p class="notice error" role="alert">This console is for workspace managers. You are signed in,
      but as an ordinary member, or with a token that lacks the admin scope.</p>
      <p><a href="/admin/login">Sign in as someone else</a></p>`,
  );
}
