import * as oidc from "openid-client";
import { isLoopbackHost } from "../loopback.ts";

/**
 * Login through an organisation's OpenID Connect provider (SPEC §3a) with `openid-client`:
 * discovery, authorization code + PKCE S256 + state + nonce, ID token validation, and the userinfo
 * endpoint when the ID token is "thin" (SPEC §3a: Okta and oidc-provider send the email claims
 * only there with the code flow). North only keeps what the library hands back as validated
 * claims.
 */

export interface IdpSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** The values a login must carry from the redirect to the callback. */
export interface PendingLogin {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

/** The IdP could not be reached or answered nonsense: the page says the firm's sign-in is down. */
export class IdpUnreachableError extends Error {
  override name = "IdpUnreachableError";
}

/** The IdP answered, but the login it returned does not hold (state, nonce, code, signature). */
export class IdpLoginError extends Error {
  override name = "IdpLoginError";
}

/**
 * Whether the IdP vouches for the email (SPEC §3a: only verified identities). `email_verified`
 * is the OIDC claim; Microsoft Entra ID never sends it and instead offers the optional claim
 * `xms_edov` ("email domain owner verified"), which North reads only when `email_verified` is
 * absent (decision 017).
 */
export function emailIsVerified(claims: Record<string, unknown>): boolean {
  if (claims.email_verified !== undefined) return claims.email_verified === true;
  return claims.xms_edov === true;
}

/** Whether the ID token leaves the email, or whether it is verified, to the userinfo endpoint. */
export function lacksEmailClaims(claims: Record<string, unknown>): boolean {
  if (typeof claims.email !== "string") return true;
  return claims.email_verified === undefined && claims.xms_edov === undefined;
}

/**
 * The claims North reads: the ID token's, with what it lacks taken from the userinfo answer. The
 * ID token's own claims win, but a verification travels with the email it is about: when the ID
 * token names an email, userinfo's verification counts only for that same email; when it names
 * none, the email and its verification both come from userinfo.
 */
export function withUserinfo(
  idToken: Record<string, unknown>,
  userinfo: Record<string, unknown>,
): Record<string, unknown> {
  if (typeof idToken.email !== "string") {
    const { email, email_verified, xms_edov } = userinfo;
    return { ...userinfo, ...idToken, email, email_verified, xms_edov };
  }
  return { ...(userinfo.email === idToken.email ? userinfo : {}), ...idToken };
}

/**
 * The library's failure as North's: a network failure or a timeout means the IdP is unreachable;
 * any other answer (a bad status, a signature, a `sub` that is not the ID token's) a login that
 * does not hold. Only the error's class and code are kept: its body may carry claims.
 */
function idpFailure(error: unknown, step: string): Error {
  if (error instanceof TypeError || (error as { code?: string }).code === "OAUTH_TIMEOUT") {
    return new IdpUnreachableError(`${step} failed: ${(error as Error).name}`);
  }
  return new IdpLoginError(`${step} did not hold: ${(error as { code?: string }).code ?? "?"}`);
}

const DISCOVERY_TTL_MS = 10 * 60 * 1000;
const IDP_TIMEOUT_S = 10;

const isLoopback = (url: URL) => isLoopbackHost(url.hostname);

export function createIdentityProviders() {
  const configurations = new Map<string, { config: oidc.Configuration; at: number }>();

  async function configurationFor(idp: IdpSettings): Promise<oidc.Configuration> {
    const key = `${idp.issuer}\u0000${idp.clientId}\u0000${idp.clientSecret}`;
    const cached = configurations.get(key);
    if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.config;
    const issuer = new URL(idp.issuer);
    try {
      const config = await oidc.discovery(
        issuer,
        idp.clientId,
        idp.clientSecret,
        oidc.ClientSecretPost(idp.clientSecret),
        {
          timeout: IDP_TIMEOUT_S,
          // Plain http only for an IdP on this machine (local installs and the test IdP).
          execute: isLoopback(issuer) ? [oidc.allowInsecureRequests] : [],
        },
      );
      configurations.set(key, { config, at: Date.now() });
      return config;
    } catch (error) {
      throw new IdpUnreachableError(`discovery failed: ${(error as Error).name}`);
    }
  }

  return {
    /** The URL to send the person to, and what the callback must check. */
    async begin(
      idp: IdpSettings,
      redirectUri: string,
      loginHint: string,
    ): Promise<{ url: URL; pending: PendingLogin }> {
      const config = await configurationFor(idp);
      const pending: PendingLogin = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        codeVerifier: oidc.randomPKCECodeVerifier(),
      };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: "openid email profile",
        response_type: "code",
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: "S256",
        state: pending.state,
        nonce: pending.nonce,
        login_hint: loginHint,
      });
      return { url, pending };
    },

    /**
     * Exchanges the callback's code and returns the validated identity: the ID token's, its
     * missing email claims read from the userinfo endpoint, whose `sub` the library checks
     * against the ID token's.
     */
    async complete(
      idp: IdpSettings,
      callbackUrl: URL,
      pending: PendingLogin,
    ): Promise<VerifiedIdentity> {
      const config = await configurationFor(idp);
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        throw idpFailure(error, "token exchange");
      }
      const idToken = tokens.claims();
      if (!idToken) throw new IdpLoginError("no ID token");
      let claims: Record<string, unknown> & { iss: string; sub: string } = idToken;
      if (lacksEmailClaims(idToken)) {
        try {
          const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub);
          claims = { ...withUserinfo(idToken, userinfo), iss: idToken.iss, sub: idToken.sub };
        } catch (error) {
          throw idpFailure(error, "userinfo");
        }
      }
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof claims.email === "string" ? claims.email : null,
        emailVerified: emailIsVerified(claims),
      };
    },
  };
}

export type IdentityProviders = ReturnType<typeof createIdentityProviders>;
