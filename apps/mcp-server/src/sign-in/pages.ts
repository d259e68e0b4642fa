import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** The sign-in pages' stylesheet, served at /sign-in/style.css (the CSP allows no inline style). */
export const SIGN_IN_STYLESHEET = `
:root { color-scheme: light; font-family: system-ui, sans-serif; }
body { margin: 0; background: #f4f5f7; color: #1d2330; }
main { max-width: 28rem; margin: 3rem auto; padding: 1.5rem; background: #fff;
  border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
@media (max-width: 30rem) { main { margin: 0; border-radius: 0; } }
h1 { font-size: 1.35rem; margin-top: 0; }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
input { width: 100%; box-sizing: border-box; padding: .55rem; font-size: 1rem;
  border: 1px solid #9aa1ad; border-radius: 4px; }
button { margin-top: 1rem; padding: .55rem 1.1rem; font-size: 1rem; border-radius: 4px;
  border: 1px solid #1d4ed8; background: #1d4ed8; color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: #1d2330; border-color: #9aa1ad; }
button:focus-visible, input:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.error { border-left: 4px solid #b91c1c; background: #fef2f2; padding: .5rem .75rem; }
.warning { border-left: 4px solid #b45309; background: #fffbeb; padding: .5rem .75rem; }
.note { color: #4b5563; font-size: .9rem; }
ul.scopes { padding-left: 1.2rem; }
hr { border: 0; border-top: 1px solid #e5e7eb; margin: 1.5rem 0; }
`;

function layout(title: string, body: HtmlEscapedString | Promise<HtmlEscapedString>) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · North</title>
<link rel="stylesheet" href="/sign-in/style.css">
</head>
<body><main>${body}</main></body>
</html>`;
}

export interface SignInPageOptions {
  /** The library's signed authorization query, carried through the forms unchanged. */
  continueQuery: string;
  error?: string;
  /** Show the API-token form (organisations without an IdP, the embedded default). */
  email?: string;
}

export function signInPage(options: SignInPageOptions) {
  return layout(
    "Sign in",
    html`<h1>Sign in to North</h1>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ""}
<form method="post" action="/sign-in/email">
  <input type="hidden" name="continue" value="${options.continueQuery}">
  <label for="email">Work email</label>
  <input id="email" type="email" name="email" autocomplete="email" required value="${options.email ?? ""}">
  <button type="submit">Continue with your firm's sign-in</button>
</form>
<hr>
<form method="post" action="/sign-in/token">
  <input type="hidden" name="continue" value="${options.continueQuery}">
  <label for="token">Or an API token</label>
  <input id="token" type="password" name="token" autocomplete="off" required>
  <p class="note">For workspaces without a firm sign-in (a local install): the token <code>bun run start</code> printed.</p>
  <button type="submit" class="secondary">Sign in with the token</button>
</form>`,
  );
}

/** On to the firm's sign-in: a navigation of its own (see the email handler for why). */
export function redirectPage(url: string) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0; url=${url}">
<title>Continue to your firm's sign-in · North</title>
<link rel="stylesheet" href="/sign-in/style.css">
</head>
<body><main><h1>Continue to your firm's sign-in</h1>
<p><a href="${url}">Continue</a></p></main></body>
</html>`;
}

/** A refusal or failure: says what happened and what to do, and offers nothing to retry into. */
export function messagePage(title: string, message: string, hint?: string) {
  return layout(
    title,
    html`<h1>${title}</h1>
<p class="error" role="alert">${message}</p>
${hint ? html`<p class="note">${hint}</p>` : ""}`,
  );
}

export const SCOPE_WORDS: Record<string, string> = {
  "profile:write":
    "Read and update your working profile (how you like to work), and run onboarding",
  "memory:read": "Search what your workspace remembers",
  "memory:write": "Save new memories to your workspace",
  admin: "Manager tools: review your organisation's profiles, memories and audit",
  offline_access: "Stay connected for up to 30 days without signing in again",
};

/** Who receives the grant, as the consent page names it (SPEC §3a). */
export interface ConsentClient {
  /** Its self-declared name, without anything that looks like a web address. */
  name: string;
  /** Where the browser takes the code: the redirect URI's host (or a loopback address). */
  redirectHost: string;
  /** The redirect is a loopback address: the app runs on this computer, not on a website. */
  onThisComputer: boolean;
  /** A metadata-document client: the host its description was read from. */
  documentHost: string | null;
  /** Registered through DCR: nobody vouches for what it says about itself. */
  unverified: boolean;
  /** Its self-declared `client_uri`, only when it shares the redirect's origin. */
  homePage: string | null;
}

export interface ConsentPageOptions {
  client: ConsentClient;
  organizationName: string;
  memberEmail: string;
  scopes: readonly string[];
  /** Scopes asked for but beyond the member's role: named, not granted. */
  withheld: readonly string[];
  continueQuery: string;
  csrf: string;
}

export function consentPage(options: ConsentPageOptions) {
  const { client } = options;
  const grantable = options.scopes.some((s) => s !== "offline_access");
  return layout(
    "Allow access",
    html`<h1>Allow ${client.name} to use North?</h1>
${
  client.unverified
    ? html`<p class="warning" role="note"><strong>Unverified app.</strong> North cannot confirm who made it: its name is only what the app says about itself. Allow it only if you started this connection yourself.</p>`
    : ""
}
<p><strong>${client.name}</strong>${client.homePage ? html` (<span class="note">${client.homePage}</span>)` : ""} asks to act for
<strong>${options.memberEmail}</strong> in <strong>${options.organizationName}</strong>.</p>
<p>If you allow, your access is handed to ${
      client.onThisComputer
        ? html`an app running on this computer (<strong>${client.redirectHost}</strong>), not to a website`
        : html`the website <strong>${client.redirectHost}</strong>`
    }.</p>
${client.documentHost ? html`<p>North read this app's description from <strong>${client.documentHost}</strong>.</p>` : ""}
${
  grantable
    ? html`<p>It will be able to:</p>
<ul class="scopes">${options.scopes.map((s) => html`<li>${SCOPE_WORDS[s] ?? s}</li>`)}</ul>`
    : html`<p class="error" role="alert">It asked only for access your role does not include, so there is nothing to allow.</p>`
}
${
  options.withheld.length
    ? html`<p class="note">Not included, because your role does not have it: ${options.withheld.map((s) => SCOPE_WORDS[s] ?? s).join("; ")}.</p>`
    : ""
}
<form method="post" action="/sign-in/consent">
  <input type="hidden" name="continue" value="${options.continueQuery}">
  <input type="hidden" name="csrf" value="${options.csrf}">
  ${grantable ? html`<button type="submit" name="decision" value="allow">Allow</button>` : ""}
  <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<p class="note">You can disconnect it later; your manager can too.</p>
<form method="post" action="/sign-in/sign-out">
  <button type="submit" class="secondary">Not you? Sign out</button>
</form>`,
  );
}
