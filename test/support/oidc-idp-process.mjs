// A real OpenID Connect provider (oidc-provider, under Node) standing in for the firm's identity
// provider in end-to-end tests. Not a mock: discovery, JWKS, authorization code + PKCE, token
// endpoint with client_secret_basic / client_secret_post, signed ID tokens.
//
// Started as `node test/support/oidc-idp-process.mjs` with `IDP_CONFIG` holding JSON:
//   { port: number (0 = random),
//     clients: [{ client_id, client_secret, redirect_uris: [...] }],
//     accounts: [{ sub, email, email_verified, name }],
//     idTokenClaims: boolean (default false: oidc-provider's own, conformant behaviour — with the
//       code flow the ID token carries no email claims, they are at the userinfo endpoint, as
//       Okta does; true: email, email_verified and name in the ID token too, as Google does),
//     issuer: string (default http://127.0.0.1:PORT; another when a proxy stands in front) }
// Prints exactly one line on stdout once listening: READY {"issuer":"http://127.0.0.1:PORT","port":PORT}.
// Everything else (oidc-provider's notices and warnings, errors) goes to stderr.
// Exits on SIGTERM, SIGINT, and when its stdin closes (the parent went away).
//
// The only page a browser has to drive is GET /interaction/:uid, a login form with
// <input name="login"> (an account's email or sub) and <button type="submit">Sign in</button>.
// Consent is granted automatically with exactly what the client asked for.

import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import Provider from "oidc-provider";

// oidc-provider prints its NOTICE lines with console.info (stdout); keep stdout for READY only.
console.info = (...args) => console.error(...args);
console.log = (...args) => console.error(...args);

const config = parseConfig(process.env.IDP_CONFIG);

function parseConfig(raw) {
  if (!raw) fail("IDP_CONFIG is not set");
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    fail(`IDP_CONFIG is not JSON: ${error.message}`);
  }
  const { port = 0, clients = [], accounts = [], idTokenClaims = false, issuer } = parsed;
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail("IDP_CONFIG.port is not a port");
  if (!Array.isArray(clients) || clients.length === 0) fail("IDP_CONFIG.clients must be non-empty");
  if (!Array.isArray(accounts)) fail("IDP_CONFIG.accounts must be an array");
  if (typeof idTokenClaims !== "boolean") fail("IDP_CONFIG.idTokenClaims must be a boolean");
  if (issuer !== undefined && typeof issuer !== "string") fail("IDP_CONFIG.issuer must be a URL");
  for (const account of accounts) {
    if (typeof account.sub !== "string" || account.sub === "") fail("every account needs a sub");
  }
  return { port, clients, accounts, idTokenClaims, issuer };
}

function fail(message) {
  process.stderr.write(`oidc-idp: ${message}\n`);
  process.exit(2);
}

/** Login by email (case-insensitive) or by sub. */
function findAccountByLogin(login) {
  const wanted = login.trim();
  if (wanted === "") return undefined;
  return config.accounts.find(
    (account) =>
      account.sub === wanted ||
      (typeof account.email === "string" && account.email.toLowerCase() === wanted.toLowerCase()),
  );
}

function signingKey() {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), use: "sig", alg: "RS256" };
}

function buildProvider(issuer) {
  const provider = new Provider(issuer, {
    clients: config.clients.map((client) => ({
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: client.redirect_uris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    })),
    // A client registered with either secret method may authenticate with both
    // (oidc-provider treats client_secret_basic and client_secret_post as one family).
    clientAuthMethods: ["client_secret_basic", "client_secret_post"],
    jwks: { keys: [signingKey()] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name"],
    },
    scopes: ["openid", "email", "profile"],
    // false puts the scope-granted claims (email, email_verified, name) in the ID token itself.
    conformIdTokenClaims: !config.idTokenClaims,
    pkce: { required: () => true },
    responseTypes: ["code"],
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: true },
      revocation: { enabled: false },
      introspection: { enabled: false },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const account = config.accounts.find((candidate) => candidate.sub === sub);
      if (!account) return undefined;
      return {
        accountId: account.sub,
        async claims() {
          const claims = { sub: account.sub };
          if (account.email !== undefined) claims.email = account.email;
          if (account.email_verified !== undefined) claims.email_verified = account.email_verified;
          if (account.name !== undefined) claims.name = account.name;
          return claims;
        },
      };
    },
    ttl: {
      AccessToken: 60 * 60,
      AuthorizationCode: 60,
      IdToken: 60 * 60,
      Interaction: 60 * 60,
      Session: 60 * 60,
      Grant: 60 * 60,
    },
    clientBasedCORS: () => false,
    async renderError(ctx, out) {
      ctx.type = "html";
      ctx.body = page(
        "Sign-in error",
        `<h1>Sign-in error</h1>${Object.entries(out)
          .map(([key, value]) => `<p><strong>${escapeHtml(key)}</strong>: ${escapeHtml(value)}</p>`)
          .join("")}`,
      );
    },
  });
  return provider;
}

function escapeHtml(value) {
  return String(value)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

function page(title, body) {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
${body}
</body>
</html>
`;
}

function loginPage(uid, clientId, { login = "", error } = {}) {
  return page(
    "Sign in",
    `<h1>Sign in</h1>
<p>to continue to ${escapeHtml(clientId)}</p>
${error ? `<p role="alert" class="error">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
  <label>Email or username <input name="login" value="${escapeHtml(login)}" autofocus></label>
  <button type="submit">Sign in</button>
</form>`,
  );
}

function sendHtml(res, status, html) {
  res.statusCode = status;
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  res.setHeader("Cache-Control", "no-store");
  res.end(html);
}

async function readForm(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error("form body too large");
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** Grants exactly the scopes and claims the client asked for, and finishes the interaction. */
async function grantConsent(provider, req, res, details) {
  const {
    prompt: { details: missing },
    params,
    session,
  } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  if (missing.missingResourceScopes) {
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
  }
  const grantId = await grant.save();
  const consent = details.grantId ? {} : { grantId };
  await provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
}

async function handleInteraction(provider, req, res, url) {
  const match = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
  if (!match) return sendHtml(res, 404, page("Not found", "<h1>Not found</h1>"));
  const [, uid, loginPath] = match;
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) return sendHtml(res, 400, page("Bad request", "<h1>Bad request</h1>"));
  const clientId = details.params.client_id;

  if (req.method === "GET" && !loginPath) {
    if (details.prompt.name === "login") return sendHtml(res, 200, loginPage(uid, clientId));
    if (details.prompt.name === "consent") return grantConsent(provider, req, res, details);
    return sendHtml(res, 400, page("Bad request", "<h1>Unsupported prompt</h1>"));
  }

  if (req.method === "POST" && loginPath) {
    if (details.prompt.name !== "login") {
      return sendHtml(res, 400, page("Bad request", "<h1>Not a login prompt</h1>"));
    }
    const form = await readForm(req);
    const login = form.get("login") ?? "";
    const account = findAccountByLogin(login);
    if (!account) {
      return sendHtml(res, 200, loginPage(uid, clientId, { login, error: "Unknown account." }));
    }
    return provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.sub } },
      { mergeWithLastSubmission: false },
    );
  }

  res.statusCode = 405;
  res.end();
}

async function main() {
  let provider;
  let callback;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname.startsWith("/interaction/")) {
      handleInteraction(provider, req, res, url).catch((error) => {
        process.stderr.write(`oidc-idp: interaction failed: ${error?.stack ?? error}\n`);
        if (!res.headersSent) {
          sendHtml(res, 400, page("Sign-in error", `<h1>${escapeHtml(error?.message)}</h1>`));
        } else {
          res.end();
        }
      });
      return;
    }
    if (!callback) {
      res.statusCode = 503;
      res.end();
      return;
    }
    callback(req, res);
  });
  server.keepAliveTimeout = 1_000;

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  const issuer = config.issuer ?? `http://127.0.0.1:${port}`;
  provider = buildProvider(issuer);
  provider.on("server_error", (_ctx, error) => {
    process.stderr.write(`oidc-idp: server_error: ${error?.stack ?? error}\n`);
  });
  callback = provider.callback();

  let stopping = false;
  const stop = (reason) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`oidc-idp: stopping (${reason})\n`);
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2_000).unref();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  process.stdin.on("end", () => stop("stdin closed"));
  process.stdin.on("close", () => stop("stdin closed"));
  process.stdin.on("error", () => stop("stdin error"));
  process.stdin.resume();

  process.stdout.write(`READY ${JSON.stringify({ issuer, port })}\n`);
}

main().catch((error) => {
  process.stderr.write(`oidc-idp: failed to start: ${error?.stack ?? error}\n`);
  process.exit(1);
});
