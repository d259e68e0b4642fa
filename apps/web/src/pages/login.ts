import { html } from "hono/html";
import { layout } from "./layout.ts";

export function loginPage(message?: string) {
  return layout(
    "Sign in",
    html`${message ? html`<p class="notice" role="alert">${message}</p>` : ""}
      <p>This console is for workspace managers. Paste a North token that carries the
        <code>admin</code> scope (<code>north token create … --scope admin</code>).</p>
      <form method="post" action="/admin/login">
        <label>Token <input type="password" name="token" autocomplete="off" size="60" required /></label>
        <button type="submit">Sign in</button>
      </form>`,
  );
}

export function refusedPage() {
  return layout(
    "Not available",
    html`<p class="notice" role="alert">This console is for workspace managers. Your token is
      valid, but it belongs to an ordinary member or lacks the admin scope.</p>
      <p><a href="/admin/login">Sign in with another token</a></p>`,
  );
}
