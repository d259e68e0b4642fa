import { describe, expect, it } from "vitest";
import { classifyStatus, embeddingsEndpoint, readAnswer, retryAfterMs } from "./request.ts";

const NOW = Date.parse("2030-01-01T00:00:00Z");

describe("the embeddings endpoint", () => {
  it.each([
    ["https://api.openai.com/v1", "https://api.openai.com/v1/embeddings"],
    ["https://api.mistral.ai/v1/", "https://api.mistral.ai/v1/embeddings"],
    ["http://127.0.0.1:11434/v1/embeddings", "http://127.0.0.1:11434/v1/embeddings"],
    [
      "https://firm.openai.azure.com/openai/deployments/small?api-version=2024-10-21",
      "https://firm.openai.azure.com/openai/deployments/small/embeddings?api-version=2024-10-21",
    ],
  ])("is <base>/embeddings for %s", (base, endpoint) => {
    expect(embeddingsEndpoint(base).toString()).toBe(endpoint);
  });
});

describe("Retry-After", () => {
  const headers = (init: Record<string, string>) => new Headers(init);

  it("reads delay-seconds", () => {
    expect(retryAfterMs(headers({ "Retry-After": "3" }), NOW)).toBe(3_000);
    expect(retryAfterMs(headers({ "Retry-After": " 0 " }), NOW)).toBe(0);
  });

  it("reads an HTTP-date as the time left until it", () => {
    const at = new Date(NOW + 42_000).toUTCString();
    expect(retryAfterMs(headers({ "Retry-After": at }), NOW)).toBe(42_000);
    const past = new Date(NOW - 5_000).toUTCString();
    expect(retryAfterMs(headers({ "Retry-After": past }), NOW)).toBe(0);
  });

  it("prefers retry-after-ms where a provider sends it", () => {
    expect(retryAfterMs(headers({ "retry-after-ms": "1500", "Retry-After": "2" }), NOW)).toBe(
      1_500,
    );
  });

  it("is absent when missing or unreadable", () => {
    expect(retryAfterMs(headers({}), NOW)).toBeUndefined();
    expect(retryAfterMs(headers({ "Retry-After": "soon" }), NOW)).toBeUndefined();
    expect(retryAfterMs(headers({ "Retry-After": "-3" }), NOW)).toBeUndefined();
  });
});

describe("an answer's status", () => {
  it.each([
    [429, "rate_limited"],
    [401, "credential_refused"],
    [403, "credential_refused"],
    [400, "rejected"],
    [404, "rejected"],
    [413, "rejected"],
    [422, "rejected"],
    [302, "rejected"],
    [500, "unreachable"],
    [502, "unreachable"],
    [503, "unreachable"],
  ] as const)("HTTP %i is %s", (status, failureClass) => {
    expect(classifyStatus(status, new Headers(), NOW)).toMatchObject({
      ok: false,
      class: failureClass,
    });
  });
});

describe("an answer's body", () => {
  const answer = (embeddings: unknown[]) =>
    JSON.stringify({ data: embeddings.map((embedding, index) => ({ embedding, index })) });

  it("puts vectors in input order by their index", () => {
    const body = JSON.stringify({
      data: [
        { index: 1, embedding: [0, 1] },
        { index: 0, embedding: [1, 0] },
      ],
    });
    expect(readAnswer(body, 2)).toEqual({
      ok: true,
      vectors: [
        [1, 0],
        [0, 1],
      ],
    });
  });

  it.each([
    ["not JSON", "<html>Bad gateway</html>", 1],
    ["a NaN literal", "[NaN]", 1],
    ["no data", JSON.stringify({ error: "x" }), 1],
    ["null", "null", 1],
    ["too few vectors", answer([[1, 2]]), 2],
    ["an infinite value", '{"data":[{"index":0,"embedding":[1e999,0]}]}', 1],
    ["a null value", answer([[null, 1]]), 1],
    ["a string value", answer([["NaN", 1]]), 1],
    ["a base64 string", answer(["AAAAAA=="]), 1],
    ["an empty vector", answer([[]]), 1],
    ["uneven vectors", answer([[1, 2], [1]]), 2],
    ["an index out of range", JSON.stringify({ data: [{ index: 3, embedding: [1] }] }), 1],
    [
      "a repeated index",
      JSON.stringify({
        data: [
          { index: 0, embedding: [1] },
          { index: 0, embedding: [1] },
        ],
      }),
      2,
    ],
  ])("is rejected when it has %s", (_name, body, inputs) => {
    expect(readAnswer(body, inputs)).toMatchObject({ ok: false, class: "rejected" });
  });

  it("is rejected when its vectors are not the learned length", () => {
    expect(readAnswer(answer([[1, 2, 3]]), 1, 4)).toMatchObject({ ok: false, class: "rejected" });
    expect(readAnswer(answer([[1, 2, 3, 4]]), 1, 4)).toMatchObject({ ok: true });
  });

  it("never quotes the body in its reason", () => {
    const secret = "confidential client matter";
    const result = readAnswer(`oops ${secret}`, 1);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(secret);
  });
});
