// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of conformance-authorization.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/conformance-authorization.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "MCP authorization-server conformance passes every authorization-server scenario that applies to North, for a client metadata document",
    },
    mutation: {
      in: "ADVERTISED",
      find: '  "client_id_metadata_document_supported",',
      replace: "",
      why: "the metadata trimmed of client_id_metadata_document_supported: hosts fall back to DCR",
    },
  },
  {
    check: {
      file: SUITE,
      name: "MCP authorization-server conformance passes every authorization-server scenario that applies to North, for a client registered by DCR",
    },
    mutation: {
      in: "ADVERTISED",
      find: '  "issuer",',
      replace: "",
      why: "the metadata trimmed of its issuer: clients cannot check the iss they are sent back",
    },
  },
];
