import { Hono } from "hono";
import { type OAuthOptions, protectedResourceMetadata } from "../oauth.ts";
import type { AppEnv } from "./env.ts";

/**
 * OAuth resource-server mode: `/.well-known/oauth-protected-resource` (RFC 9728), which every
 * 401 challenge names.
 */
export function buildResourceMetadataRoutes(oauth: OAuthOptions) {
  const app = new Hono<AppEnv>();
  const metadata = protectedResourceMetadata(oauth);
  // RFC 9728 §3.1: at the root, and with the resource's path appended.
  const resourcePath = new URL(oauth.resourceUrl).pathname.replace(/\/$/, "");
  app.get("/.well-known/oauth-protected-resource", (c) => c.json(metadata));
  if (resourcePath) {
    app.get(`/.well-known/oauth-protected-resource${resourcePath}`, (c) => c.json(metadata));
  }
  return app;
}
