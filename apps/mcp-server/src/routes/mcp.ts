import { TOKEN_PREFIX } from "@north/db";
import { type Context, Hono } from "hono";
import { bearerToken } from "../auth.ts";
import { authorize } from "../capabilities/index.ts";
import { type CredentialProof, proofFor, samePrincipal } from "../credential-proof.ts";
import { describeError } from "../logger.ts";
import type { AppMetrics } from "../metrics.ts";
import type { Principal } from "../principal.ts";
import { meterPost } from "../protocol-meter.ts";
import { createMcpServer, type ServerDeps } from "../server.ts";
import { createMcpHttpEntry } from "../server-transports.ts";
import { stepUpScopes } from "../step-up.ts";
import type { TenantGate } from "../tenant-gate.ts";
import type { Capability } from "../tool-definition.ts";
import type { AppEnv } from "./env.ts";

export interface McpRoutesOptions
  extends Pick<ServerDeps, "db" | "limiter" | "logger" | "fingerprint" | "now"> {
  capabilities: readonly Capability[];
  gate: TenantGate;
  metrics: AppMetrics;
  /** The largest `/mcp` body the SDK's transport accepts (the app's own limit runs first). */
  maxBodyBytes: number;
  /** The 401 challenge without its scope (`Bearer resource_metadata=…` or `Bearer realm=…`). */
  challenge: string;
  /** The protected-resource metadata URL, in OAuth mode: a host holding an OAuth token can step up. */
  metadataUrl?: string;
  /**
   * The request's principal as the database says now, never remembered; throws the app's 401
   * when its credentials no longer hold (decision 036).
   */
  lookUp: (request: Request) => Promise<Principal>;
}

/**
 * For a tools/call or prompts/get (or a batch holding one) naming a tool or prompt of a
 * capability the principal lacks scopes for: the scopes needed, for a 403 (SPEC §3).
 */
function missingScopes(
  principal: Principal,
  body: unknown,
  capabilities: readonly Capability[],
): { scopes: readonly string[]; id: unknown } | undefined {
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!message || typeof message !== "object") continue;
    const { method, params, id } = message as {
      method?: unknown;
      params?: { name?: unknown };
      id?: unknown;
    };
    if (method !== "tools/call" && method !== "prompts/get") continue;
    if (typeof params?.name !== "string") continue;
    const decision = authorize(principal, method, params.name, capabilities);
    if (!decision.allowed && decision.reason === "scope_off") {
      return { scopes: decision.scopes, id: id ?? null };
    }
  }
  return undefined;
}

/** The 403 of a call that needs scopes the token lacks, with the challenge naming them. */
function insufficientScope(
  c: Context<AppEnv>,
  refusal: { scopes: readonly string[]; id: unknown },
  challenge: (scope: string) => string,
): Response {
  const scope = refusal.scopes.join(" ");
  return c.json(
    {
      jsonrpc: "2.0",
      error: { code: -32003, message: `Insufficient scope: this call needs ${scope}` },
      id: refusal.id,
    },
    403,
    { "WWW-Authenticate": challenge(scope) },
  );
}

/**
 * The scope gate's 403 for a call naming a tool or prompt the principal lacks scopes for, then
 * step-up's (MCP 2025-11-25) for one that needs more than the grant holds; undefined when it
 * may be served. Only a host holding an OAuth token can re-authorize: an API token's scopes
 * are what its holder chose, so its calls run as they are. A remembered principal is looked up
 * (`prove`) before it is refused, so a 403 is only ever told to whoever the token names now.
 */
async function scopeRefusal(
  c: Context<AppEnv>,
  principal: Principal,
  body: unknown,
  options: McpRoutesOptions & { prove: () => Promise<Principal> },
): Promise<Response | undefined> {
  let who = principal;
  let missing = missingScopes(who, body, options.capabilities);
  if (missing && who.unproven) {
    who = await options.prove();
    missing = missingScopes(who, body, options.capabilities);
  }
  if (missing) {
    return insufficientScope(
      c,
      missing,
      (scope) => `${options.challenge}, error="insufficient_scope", scope="${scope}"`,
    );
  }
  const { metadataUrl } = options;
  if (!metadataUrl || bearerToken(c.req.raw)?.startsWith(TOKEN_PREFIX)) return undefined;
  let proven: Principal | undefined;
  const stepUp = await stepUpScopes(who, body, {
    db: options.db,
    capabilities: options.capabilities,
    fingerprintSubject: (canonical) => options.fingerprint(canonical).fingerprint,
    prove: async () => (proven = await options.prove()),
  });
  // Step-up looked a remembered principal up: whoever the token names now meets the scope gate
  // first (proven, so this runs once), as a principal looked up from the start would have.
  if (proven && !samePrincipal(proven, who)) return scopeRefusal(c, proven, body, options);
  if (!stepUp) return undefined;
  return insufficientScope(
    c,
    stepUp,
    (scope) =>
      `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${metadataUrl}"`,
  );
}

/** A single tools/call request: the one message whose own transaction proves its principal. */
function isToolCall(body: unknown): boolean {
  if (!body || typeof body !== "object" || Array.isArray(body)) return false;
  const { method, id } = body as { method?: unknown; id?: unknown };
  return method === "tools/call" && id !== undefined;
}

/**
 * A request's principal on its way to being proven (decision 036): a remembered one is answered
 * only once the transaction of the tool call it serves proved it, or once it is looked up
 * (`proven`). A credential that turns out not to hold gets back the protocol points it was
 * charged, so a revoked token spends nothing of its member's budget.
 */
function admission(
  remembered: Principal,
  lookUp: () => Promise<Principal>,
  limiter: McpRoutesOptions["limiter"],
) {
  let principal = remembered;
  let charged = 0;
  return {
    principal: () => principal,
    /** The protocol points the request was charged as its remembered principal. */
    charged(points: number) {
      if (principal.unproven) charged = points;
    },
    async proven(): Promise<Principal> {
      if (!principal.unproven) return principal;
      try {
        principal = await lookUp();
      } catch (error) {
        if (charged > 0) await limiter.refund(remembered, "protocol", charged);
        throw error;
      }
      return principal;
    },
  };
}

/** Stateless server: no standalone SSE stream to open and no session to end (MCP transports spec). */
const notAllowed = () =>
  new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Method not allowed" },
      id: null,
    }),
    { status: 405, headers: { Allow: "POST", "Content-Type": "application/json" } },
  );

/**
 * `POST /mcp` (every revision North serves; a fresh server per request, JSON responses), and
 * 405 for `GET`/`DELETE /mcp`. Behind the body limit and the authentication app.ts puts in
 * front of it; here, in order: the protocol meter, the scope gate, step-up, then the server.
 */
export function buildMcpRoutes(options: McpRoutesOptions) {
  const app = new Hono<AppEnv>();
  const entry = createMcpHttpEntry({
    maxBodyBytes: options.maxBodyBytes,
    onerror: (error) =>
      options.logger.debug(
        { ...describeError(error) },
        "mcp request refused by the protocol layer",
      ),
  });

  app.post("/mcp", async (c) => {
    const admitted = admission(
      c.get("principal"),
      () => options.lookUp(c.req.raw),
      options.limiter,
    );
    let principal = admitted.principal();
    const requestId = c.get("requestId");
    const proven = async () => {
      principal = await admitted.proven();
      return principal;
    };
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      // A body that does not parse is one message all the same.
      const refused = await meterPost(null, await proven(), requestId, options);
      if (refused) return refused;
      return c.json(
        { jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null },
        400,
      );
    }
    if (!isToolCall(body)) await proven();
    // Every message counts against the principal's protocol budget, before any server work.
    const refused = await meterPost(body, principal, requestId, { ...options, prove: proven });
    if (refused) return refused;
    admitted.charged(Array.isArray(body) ? Math.max(1, body.length) : 1);
    const gate = (as: Principal) => scopeRefusal(c, as, body, { ...options, prove: proven });
    const gated = await gate(principal);
    if (gated) return gated;
    const serve = (as: Principal, proof?: CredentialProof) =>
      entry.serve(c.req.raw, body, () =>
        createMcpServer(
          as,
          {
            db: options.db,
            limiter: options.limiter,
            logger: options.logger,
            fingerprint: options.fingerprint,
            now: options.now,
            capabilities: options.capabilities,
            gate: options.gate,
            metrics: options.metrics,
          },
          { requestId, proof },
        ),
      );
    const proof = proofFor(principal);
    const response = await serve(principal, proof);
    if (!proof || proof.state === "proven") return response;
    // No transaction proved it (none ran, or the database refused the token): look it up. A
    // refused call changed nothing, so it is served again as whoever the token names now.
    if (proof.state === "refused") {
      options.logger.info(
        { requestId, outcome: "credential_refused" },
        "the database refused a remembered credential: looked up again",
      );
    }
    const current = await admitted.proven();
    if (proof.state === "pending" && samePrincipal(current, principal)) return response;
    // Whoever the token names now passes the same gate before it is served: scopes that
    // narrowed under the same credential get the 403 a looked-up principal would.
    return (await gate(current)) ?? serve(current);
  });

  app.get("/mcp", notAllowed);
  app.delete("/mcp", notAllowed);

  return app;
}
