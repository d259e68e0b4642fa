import { describe, expect, it } from "vitest";
import { isLoopbackAddress, isLoopbackHost } from "./loopback.ts";

describe("isLoopbackHost", () => {
  it.each(["127.0.0.1", "localhost", "[::1]"])("takes %s, as a URL spells it", (host) =>
    expect(isLoopbackHost(host)).toBe(true),
  );
  it.each(["127.8.9.10", "::1", "LOCALHOST", "0.0.0.0", "localhost.evil", ""])(
    "refuses %s",
    (host) => expect(isLoopbackHost(host)).toBe(false),
  );
  it("takes every loopback host a URL gives", () => {
    for (const url of ["http://127.0.0.1:1/", "http://LOCALHOST/", "http://[::1]:8080/"]) {
      expect(isLoopbackHost(new URL(url).hostname), url).toBe(true);
    }
  });
});

describe("isLoopbackAddress", () => {
  it.each(["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST"])(
    "says %s is loopback",
    (host) => expect(isLoopbackAddress(host)).toBe(true),
  );
  it.each(["0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "north.example.com", "localhost.evil", ""])(
    "says %s is not",
    (host) => expect(isLoopbackAddress(host)).toBe(false),
  );
});
