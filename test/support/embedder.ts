import { createHash } from "node:crypto";
import type { Embedder } from "@north/mcp-server";

/**
 * A small, deterministic lexical embedder for the suites: each word (lower-cased, accents kept)
 * is hashed into one of 256 dimensions. Texts sharing words point the same way, so semantic
 * recall can be tested without downloading a model. It is a real `Embedder`, not a stand-in
 * for one: production injects a better one through the same interface.
 */
export function createHashingEmbedder(dimensions = 256): Embedder & { calls: number } {
  const embedder = {
    calls: 0,
    async embed(texts: readonly string[]) {
      embedder.calls += 1;
      return texts.map((text) => {
        const vector = new Array<number>(dimensions).fill(0);
        for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
          const slot = createHash("sha256").update(word).digest().readUInt32BE(0) % dimensions;
          vector[slot] = (vector[slot] ?? 0) + 1;
        }
        return vector;
      });
    },
  };
  return embedder;
}
