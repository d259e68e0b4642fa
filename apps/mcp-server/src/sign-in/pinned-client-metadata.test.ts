import { describe, expect, it } from "vitest";
import { LOOPBACK_HOSTS } from "../loopback.ts";
import { PINNED_CLIENT_METADATA } from "./pinned-client-metadata.ts";

describe("the pinned client metadata documents (decision 032)", () => {
  it.each(Object.entries(PINNED_CLIENT_METADATA))(
    "%s is a public client with loopback-only redirect URIs, under its own id",
    (clientId, document) => {
      expect(document.client_id).toBe(clientId);
      expect(document.token_endpoint_auth_method).toBe("none");
      const redirects = document.redirect_uris as string[];
      expect(redirects.length).toBeGreaterThan(0);
      for (const uri of redirects) {
        const url = new URL(uri);
        expect(url.protocol, uri).toBe("http:");
        expect(LOOPBACK_HOSTS, uri).toContain(url.hostname);
      }
    },
  );
});
