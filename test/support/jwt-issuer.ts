import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  buildMcpApp,
  createAuthResolver,
  createLogger,
  createRateLimiter,
  type McpAppDeps,
  type OAuthOptions,
} from "@north/mcp-server";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import type { TestDatabase } from "./database.ts";
import { TEST_AUDIT_KEY } from "./mcp.ts";

export type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

export interface SignOptions {
  key?: SigningKey;
  /** Relative expiry (jose syntax); null: no `exp` at all. Default 5 minutes. */
  expiresIn?: string | null;
  /** The JOSE `typ` header; null: none. Default `at+jwt`. */
  typ?: string | null;
  /** Issued-at, seconds since the epoch; default now. */
  iat?: number;
}

export interface TestIssuer {
  oauth: OAuthOptions;
  /** Signs an access token with the issuer's key, over `defaults` then `claims`. */
  sign(claims?: JWTPayload, options?: SignOptions): Promise<string>;
  /** A key the issuer's JWKS does not publish. */
  otherKey: SigningKey;
  close(): Promise<void>;
}

/**
 * A real authorization server's signing side for the resource-server suites: an ES256 key, a
 * JWKS endpoint on loopback, and a signer. North only verifies what this signs.
 */
export async function startTestIssuer(
  issuer: string,
  resourceUrl: string,
  defaults: JWTPayload,
): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const otherKey = (await generateKeyPair("ES256")).privateKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  const jwks = createServer((_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
  return {
    oauth: {
      issuer,
      jwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`,
      resourceUrl,
    },
    otherKey,
    sign(claims = {}, options = {}) {
      const typ = options.typ === undefined ? "at+jwt" : options.typ;
      const jwt = new SignJWT({
        iss: issuer,
        aud: resourceUrl,
        jti: randomUUID(),
        ...defaults,
        ...claims,
      })
        .setProtectedHeader({ alg: "ES256", kid: "k1", ...(typ ? { typ } : {}) })
        .setIssuedAt(options.iat);
      if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? "5m");
      return jwt.sign(options.key ?? privateKey);
    },
    close: () => new Promise((resolve) => jwks.close(() => resolve())),
  };
}

/**
 * The real app in OAuth resource-server mode, trusting `issuer`: JWTs are verified by the
 * production resolver against the issuer's JWKS. `admin` mounts a console stand-in.
 */
export function buildOAuthTestApp(
  db: TestDatabase,
  issuer: TestIssuer,
  options: Pick<McpAppDeps, "admin"> = {},
): ReturnType<typeof buildMcpApp> {
  return buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db, issuer.oauth),
    oauth: issuer.oauth,
    limiter: createRateLimiter({
      writesPerMinute: 1_000,
      readsPerMinute: 1_000,
      protocolRequestsPerMinute: 1_000,
    }),
    logger: createLogger({ level: "silent" }),
    auditKey: TEST_AUDIT_KEY,
    ...options,
  });
}
