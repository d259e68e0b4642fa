import { AsyncLocalStorage } from "node:async_hooks";
import type { ClientMetadataResourceFetch } from "@better-auth/oauth-provider";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import ipaddr from "ipaddr.js";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { describeError, type Logger } from "../logger.ts";
import { messagePage } from "./pages.ts";

/** Dynamic Client Registrations one source address may make per window. */
export const REGISTRATIONS_PER_ADDRESS = 30;
/** Client ID Metadata Document fetches one source address may cause per window. */
export const RESOLUTIONS_PER_ADDRESS = 60;
/** The budgets' window: an hour. */
export const REGISTRATION_WINDOW_S = 3600;

/** The budgets, from the composition root (tests shrink them). */
export interface RegistrationLimitsOptions {
  registrationsPerAddress?: number;
  resolutionsPerAddress?: number;
  windowSeconds?: number;
}

/** The key of a connection whose address the server could not read: one shared budget. */
const UNKNOWN_ADDRESS = "unknown";

/**
 * The connection's source address, as a budget key: an IPv4 address, or an IPv6 address's /64
 * (one host usually holds a whole /64, so per-address keys would cost an attacker nothing).
 * Read from the socket — `@hono/node-server`'s bindings under Node, the server's `requestIP`
 * under Bun (what `startHttpServer` passes as the fetch handler's second argument) — never
 * from a header a client could set.
 */
export function sourceAddress(c: Context): string {
  const env = c.env as { incoming?: unknown; requestIP?: unknown } | undefined;
  let address: string | undefined;
  try {
    if (env?.incoming) address = getConnInfo(c).remote.address;
    else if (typeof env?.requestIP === "function") {
      const server = env as { requestIP(request: Request): { address: string } | null };
      address = server.requestIP(c.req.raw)?.address;
    }
  } catch {
    address = undefined;
  }
  if (!address || !ipaddr.isValid(address)) return UNKNOWN_ADDRESS;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts.slice(0, 4).join(":")}::/64`;
}

type Decision = { allowed: true } | { allowed: false; retryAfterS: number };

async function spend(limiter: RateLimiterMemory, key: string): Promise<Decision> {
  try {
    await limiter.consume(key);
    return { allowed: true };
  } catch (refusal) {
    if (refusal instanceof RateLimiterRes) {
      return { allowed: false, retryAfterS: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)) };
    }
    throw refusal;
  }
}

/** The request a metadata-document fetch happens for: its address, and whether it was refused. */
interface ResolutionScope {
  address: string;
  /** A fetch went through: the library may have stored a new client. */
  fetched?: boolean;
  refusedForS?: number;
}

/**
 * Per-address budgets for the two unauthenticated ways to make North store a client (SPEC §3a):
 * DCR, counted at the register endpoint, and Client ID Metadata Document resolution, counted
 * where it happens — in the metadata transport, which the library calls from any endpoint that
 * meets an unknown URL client id — through the request's scope. In process memory, like the
 * limiter's insurance: with several replicas each holds its own budget. `afterLookup` runs
 * after a request whose metadata fetch went through (the sweep of unconsented clients).
 */
export function createRegistrationLimits(
  logger: Logger,
  options: RegistrationLimitsOptions = {},
  afterLookup: () => Promise<unknown> = async () => {},
) {
  const duration = options.windowSeconds ?? REGISTRATION_WINDOW_S;
  const registrations = new RateLimiterMemory({
    keyPrefix: "north:register",
    points: options.registrationsPerAddress ?? REGISTRATIONS_PER_ADDRESS,
    duration,
  });
  const resolutions = new RateLimiterMemory({
    keyPrefix: "north:resolve",
    points: options.resolutionsPerAddress ?? RESOLUTIONS_PER_ADDRESS,
    duration,
  });
  const scopes = new AsyncLocalStorage<ResolutionScope>();
  const refused = (c: Context, reason: string) =>
    logger.warn({ requestId: c.get("requestId" as never), reason }, "client registration refused");

  return {
    /** At the register endpoint: null when within budget, else the RFC 7591-shaped 429. */
    async register(c: Context): Promise<Response | null> {
      const decision = await spend(registrations, sourceAddress(c));
      if (decision.allowed) return null;
      refused(c, "registration_rate_limited");
      return c.json(
        {
          error: "temporarily_unavailable",
          error_description: `Too many client registrations from this address; try again in ${decision.retryAfterS} seconds.`,
        },
        429,
        { "Retry-After": String(decision.retryAfterS), "Cache-Control": "no-store" },
      );
    },

    /**
     * Around the library's endpoints: records the source address for the metadata transport,
     * and turns a fetch it refused into a 429 — a page for the browser's authorize request,
     * JSON elsewhere — instead of the library's generic invalid_client.
     */
    scope: (async (c, next) => {
      const scope: ResolutionScope = { address: sourceAddress(c) };
      await scopes.run(scope, next);
      if (scope.fetched) {
        await afterLookup().catch((error) =>
          logger.error(describeError(error), "after a metadata lookup: sweep failed"),
        );
      }
      const retryAfterS = scope.refusedForS;
      if (retryAfterS === undefined) return;
      refused(c, "resolution_rate_limited");
      const headers = { "Retry-After": String(retryAfterS), "Cache-Control": "no-store" };
      // Built on a cleared response, so none of the library's headers (a Location) carry over.
      c.res = undefined;
      c.res =
        c.req.method === "GET"
          ? await c.html(
              messagePage(
                "Too many sign-in attempts",
                "North has looked up too many apps for this network in a short time.",
                `Nothing was changed. Try again in ${Math.ceil(retryAfterS / 60)} minutes.`,
              ),
              429,
              headers,
            )
          : c.json(
              {
                error: "temporarily_unavailable",
                error_description: `Too many client metadata lookups from this address; try again in ${retryAfterS} seconds.`,
              },
              429,
              headers,
            );
    }) satisfies MiddlewareHandler,

    /** The metadata transport, spending the requesting address's budget before each fetch. */
    metered(fetch: ClientMetadataResourceFetch): ClientMetadataResourceFetch {
      return async (input, init) => {
        const scope = scopes.getStore();
        // Outside a request's scope: North's own in-process call (consent), not an outsider's.
        if (scope) {
          const decision = await spend(resolutions, scope.address);
          if (!decision.allowed) {
            scope.refusedForS = decision.retryAfterS;
            throw new Error("metadata lookup budget spent");
          }
          scope.fetched = true;
        }
        return fetch(input, init);
      };
    },
  };
}

export type RegistrationLimits = ReturnType<typeof createRegistrationLimits>;
