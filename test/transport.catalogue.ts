// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of transport.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/transport.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "transport safety answers an initialize with JSON and no session id (stateless)",
    },
    mutation: {
      in: "serveLegacy",
      find: "sessionIdGenerator: undefined,",
      replace: "sessionIdGenerator: () => randomUUID(),",
      why: "hand out session ids from a stateless server",
    },
  },
  {
    check: {
      file: SUITE,
      name: "transport safety refuses a foreign Origin, or our host name on another port, with 403; accepts its own origin or none",
    },
    mutation: {
      in: "transportGuard",
      find: "!ownOrigins(host).includes(origin.toLowerCase()) &&",
      replace: '!origin.toLowerCase().startsWith("http://localhost") &&',
      why: "accept any origin on our host name, whatever its port",
    },
  },
  {
    check: {
      file: SUITE,
      name: "transport safety refuses an unknown Host with 403 (DNS rebinding)",
    },
    mutation: {
      in: "transportGuard",
      find: "if (!host || !hosts.has(hostname(host))) {",
      replace: "if (!host) {",
      why: "require a Host header but accept any host",
    },
  },
  {
    check: {
      file: SUITE,
      name: "transport safety refuses a body over 1 MiB with 413 before parsing it",
    },
    mutation: {
      in: "MAX_BODY_BYTES",
      find: "export const MAX_BODY_BYTES = 1024 * 1024;",
      replace: "export const MAX_BODY_BYTES = 1024 * 1024 * 1024;",
      why: "a unit slip lifts the body cap to 1 GiB",
    },
  },
  {
    check: {
      file: SUITE,
      name: "transport safety answers 401 with a Bearer challenge without a token, even with a session id",
    },
    mutation: {
      in: "unauthenticated",
      find: 'res: new Response(null, { status: 401, headers: { "WWW-Authenticate": challenge } }),',
      replace: "res: new Response(null, { status: 401 }),",
      why: "a 401 without the Bearer challenge",
    },
  },
  {
    check: { file: SUITE, name: "transport safety refuses a token in the query string" },
    mutation: {
      in: "authentication",
      find: 'for (const name of ["access_token", "token", "api_key"]) {',
      replace: 'for (const name of ["token", "api_key"]) {',
      why: "forget access_token among the refused query parameters",
    },
  },
  {
    check: {
      file: SUITE,
      name: "transport safety answers GET and DELETE /mcp with 405 for a stateless server",
    },
    mutation: {
      file: "apps/mcp-server/src/routes/mcp.ts",
      find: '  app.delete("/mcp", notAllowed);\n',
      replace: "",
      why: "forget the DELETE /mcp route (404 instead of 405)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "transport safety turns an internal failure into JSON-RPC -32603 with no detail, audited and logged without the body",
    },
    mutation: {
      file: "packages/db/src/pg-errors.ts",
      find: "    errorType: error.name,\n    code:",
      replace: "    errorType: error.name,\n    message: error.message,\n    code:",
      why: "log an error's message, which for a driver error quotes the query's parameters",
    },
  },
  {
    check: { file: SUITE, name: "transport safety reports health and readiness" },
    mutation: {
      in: "buildHealthRoutes",
      find: ': limiter.degraded || embedder?.state === "degraded"',
      replace: ': !limiter.degraded || embedder?.state === "degraded"',
      why: "inverted condition: a healthy limiter reports degraded",
    },
  },
  {
    check: { file: SUITE, name: "transport safety requires authentication for the manifest" },
    mutation: {
      file: "apps/mcp-server/src/app.ts",
      find: '  app.get("/manifest", authenticate);\n',
      replace: "",
      why: "serve the manifest without authentication",
    },
  },
  {
    check: {
      file: SUITE,
      name: "transport safety accepts a browser origin configured exactly, and only that port",
    },
    mutation: {
      file: "apps/mcp-server/src/transport-guard.ts",
      find: "      !origins.has(origin.toLowerCase()) &&\n",
      replace: '      !origins.has(origin.toLowerCase().replace(/:\\d+$/, "")) &&\n',
      why: "compare configured origins without their port",
    },
  },
];
