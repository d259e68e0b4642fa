import { Hono } from "hono";
import { composeManifest } from "../manifest.ts";
import { meterManifest, type ProtocolMeterDeps } from "../protocol-meter.ts";
import type { Capability, Embedder } from "../tool-definition.ts";
import type { AppEnv } from "./env.ts";

export interface ManifestRoutesOptions {
  capabilities: readonly Capability[];
  embedder?: Embedder;
  meter: ProtocolMeterDeps;
}

/**
 * `GET /manifest`: what this principal's model receives, and why each capability is on or off.
 * Behind the authentication app.ts puts in front of it.
 */
export function buildManifestRoutes(options: ManifestRoutesOptions) {
  const app = new Hono<AppEnv>();

  // The manifest carries what tools/list does, so it costs a protocol point as that does.
  app.get("/manifest", async (c) => {
    const refused = await meterManifest(c.get("principal"), c.get("requestId"), options.meter);
    if (refused) return refused;
    const embedder = options.embedder?.status?.();
    return c.json(
      composeManifest(c.get("principal"), options.capabilities, {
        embedder: Boolean(options.embedder),
        embedderFailure: embedder?.state === "degraded" ? embedder.class : undefined,
      }),
    );
  });

  return app;
}
