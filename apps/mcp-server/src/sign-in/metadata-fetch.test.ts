import type { IncomingHttpHeaders } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { createServer as createNetServer, type Server as NetServer } from "node:net";
import type { TLSSocket } from "node:tls";
import type { ClientMetadataResourceFetch } from "@better-auth/oauth-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSignedCertificate } from "../../../../test/support/tls.ts";
import {
  CLOUD_METADATA_ADDRESSES,
  createMetadataFetch,
  isPublicUnicastAddress,
  MetadataFetchError,
  type ResolvedAddress,
} from "./metadata-fetch.ts";

const HOST = "metadata.test";

let cert = "";
let key = "";

/** A plain TCP listener on the port the refused URLs name: any connection attempt shows up here. */
let sentinel: NetServer;
let sentinelPort = 0;
let sentinelConnections = 0;

let server: HttpsServer;
let port = 0;
let tlsConnections = 0;
let seen: { url: string; headers: IncomingHttpHeaders; servername: string | false | null }[] = [];
const openSockets = new Set<import("node:net").Socket>();

const listen = (srv: NetServer, options: { port: number; host: string; ipv6Only?: boolean }) =>
  new Promise<number>((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(options, () => {
      srv.off("error", reject);
      const address = srv.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });

beforeAll(async () => {
  ({ cert, key } = selfSignedCertificate(HOST));

  sentinel = createNetServer((socket) => {
    sentinelConnections++;
    socket.destroy();
  });
  try {
    // Dual-stack: catches 127.0.0.1, ::1, 0.0.0.0 and ::ffff:127.0.0.1 alike.
    sentinelPort = await listen(sentinel, { port: 0, host: "::", ipv6Only: false });
  } catch {
    sentinelPort = await listen(sentinel, { port: 0, host: "127.0.0.1" });
  }

  server = createHttpsServer({ key, cert }, (req, res) => {
    seen.push({
      url: req.url ?? "",
      headers: req.headers,
      servername: (req.socket as TLSSocket).servername,
    });
    switch (req.url) {
      case "/client.json":
        res.writeHead(200, { "content-type": "application/json", etag: '"v1"' });
        res.end(JSON.stringify({ client_id: `https://${HOST}/client.json` }));
        return;
      case "/redirect":
        res.writeHead(302, { location: `https://${HOST}:${port}/client.json` });
        res.end("moved");
        return;
      case "/not-modified":
        res.writeHead(304, { etag: '"v1"' });
        res.end();
        return;
      case "/missing":
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("secret-error-body");
        return;
      case "/big":
        // Chunked, no Content-Length: the cap has to be enforced while reading.
        res.writeHead(200, { "content-type": "application/json" });
        res.write("x".repeat(3000));
        res.end("y".repeat(3000));
        return;
      case "/big-declared":
        res.writeHead(200, { "content-type": "application/json", "content-length": "6000" });
        res.end("z".repeat(6000));
        return;
      case "/stall-body":
        res.writeHead(200, { "content-type": "application/json" });
        res.write("{");
        return; // never ends
      default:
        return; // "/stall": never answers
    }
  });
  server.on("secureConnection", (socket) => {
    tlsConnections++;
    openSockets.add(socket);
    socket.on("close", () => openSockets.delete(socket));
  });
  port = await listen(server, { port: 0, host: "127.0.0.1" });
});

afterAll(async () => {
  for (const socket of openSockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => sentinel.close(resolve));
});

const refusal = async (promise: Promise<unknown>): Promise<MetadataFetchError> => {
  const error = await promise.then(
    () => {
      throw new Error("expected the fetch to be refused");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MetadataFetchError);
  return error as MetadataFetchError;
};

/** A lookup stub that records calls and answers with fixed addresses. */
const stubLookup = (...answers: ResolvedAddress[]) => {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    return answers;
  };
  return { lookup, calls };
};

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

/** Lets the test server (and only it) through the special-address check. */
const localFetch = (options: { timeoutMs?: number; maxBytes?: number } = {}) => {
  const stub = stubLookup(v4("127.0.0.1"));
  const fetch = createMetadataFetch({
    ...options,
    lookup: stub.lookup,
    allowAddress: (ip) => ip === "127.0.0.1",
    tlsCa: cert,
  });
  return { fetch, calls: stub.calls };
};

const tick = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("refused before any connection", () => {
  const specialAddresses = [
    "127.0.0.1",
    "127.8.9.10",
    "::1",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "::",
    "224.0.0.1",
    "255.255.255.255",
    "192.0.2.10",
    "::7f00:1",
    "64:ff9b::a00:1",
    "2001:db8::1",
  ];

  it.each(specialAddresses)("a literal %s host", async (ip) => {
    const stub = stubLookup(v4("93.184.215.14"));
    const fetch = createMetadataFetch({ lookup: stub.lookup });
    const host = ip.includes(":") ? `[${ip}]` : ip;
    const error = await refusal(fetch(`https://${host}:${sentinelPort}/client.json`));
    expect(error.code).toBe("special_address");
    expect(stub.calls).toEqual([]);
    await tick();
    expect(sentinelConnections).toBe(0);
  });

  it.each(specialAddresses)("a hostname that resolves to %s", async (ip) => {
    const stub = stubLookup(ip.includes(":") ? v6(ip) : v4(ip));
    const fetch = createMetadataFetch({ lookup: stub.lookup });
    const error = await refusal(fetch(`https://${HOST}:${sentinelPort}/client.json`));
    expect(error.code).toBe("special_address");
    expect(stub.calls).toEqual([HOST]);
    await tick();
    expect(sentinelConnections).toBe(0);
  });

  it.each([
    [v4("93.184.215.14"), v4("127.0.0.1")],
    [v4("93.184.215.14"), v4("10.1.2.3")],
    [v6("2606:4700::1111"), v6("fe80::1")],
    [v4("93.184.215.14"), v6("::ffff:192.168.0.1")],
  ])("a hostname with one public (%o) and one special (%o) address", async (pub, special) => {
    const stub = stubLookup(pub, special);
    const fetch = createMetadataFetch({ lookup: stub.lookup, timeoutMs: 2000 });
    const error = await refusal(fetch(`https://${HOST}:${sentinelPort}/client.json`));
    expect(error.code).toBe("special_address");
    expect(stub.calls).toEqual([HOST]);
    await tick();
    expect(sentinelConnections).toBe(0);
  });

  it.each([
    ["http URL", `http://${HOST}/client.json`, undefined, "not_https"],
    ["ftp URL", `ftp://${HOST}/client.json`, undefined, "not_https"],
    ["credentials in URL", `https://user:pw@${HOST}/client.json`, undefined, "credentials_in_url"],
    ["username only", `https://user@${HOST}/client.json`, undefined, "credentials_in_url"],
    ["POST", `https://${HOST}/client.json`, { method: "POST" }, "method_not_allowed"],
    ["HEAD", `https://${HOST}/client.json`, { method: "HEAD" }, "method_not_allowed"],
    ["a request body", `https://${HOST}/client.json`, { body: "x" }, "request_body"],
    ["not a URL", "not a url", undefined, "invalid_url"],
  ] as const)("%s", async (_label, url, init, code) => {
    const stub = stubLookup(v4("127.0.0.1"));
    const fetch = createMetadataFetch({ lookup: stub.lookup, allowAddress: () => true });
    const error = await refusal(fetch(url, init as RequestInit | undefined));
    expect(error.code).toBe(code);
    expect(stub.calls).toEqual([]);
    await tick();
    expect(sentinelConnections).toBe(0);
    expect(tlsConnections).toBe(0);
  });

  it("a caller signal that is already aborted", async () => {
    const { fetch, calls } = localFetch();
    const error = await refusal(
      fetch(`https://${HOST}:${port}/client.json`, { signal: AbortSignal.abort() }),
    );
    expect(error.code).toBe("aborted");
    expect(calls).toEqual([]);
    expect(tlsConnections).toBe(0);
  });

  it("a hostname that does not resolve, or resolves to nothing", async () => {
    const failing = createMetadataFetch({
      lookup: async () => {
        throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
      },
    });
    expect((await refusal(failing(`https://${HOST}/client.json`))).code).toBe("dns_failure");
    const empty = createMetadataFetch({ lookup: async () => [] });
    expect((await refusal(empty(`https://${HOST}/client.json`))).code).toBe("dns_failure");
    expect(tlsConnections).toBe(0);
  });
});

describe("a local https server reached through the test-only allowAddress", () => {
  it("returns the JSON document, called exactly as the CIMD plugin calls it", async () => {
    const { fetch, calls } = localFetch();
    seen = [];
    const controller = new AbortController();
    const response = await fetch(`https://${HOST}:${port}/client.json`, {
      headers: new Headers({
        Accept: "application/json",
        Authorization: "Bearer must-not-leak",
        Cookie: "sid=must-not-leak",
      }),
      redirect: "error",
      signal: controller.signal,
    });
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(response.redirected).toBe(false);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("etag")).toBe('"v1"');
    expect(await response.json()).toEqual({ client_id: `https://${HOST}/client.json` });

    // Resolved once, connected to the pinned IP, hostname kept for SNI and Host.
    expect(calls).toEqual([HOST]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.servername).toBe(HOST);
    expect(seen[0]?.headers.host).toBe(`${HOST}:${port}`);
    expect(seen[0]?.headers.accept).toBe("application/json");
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[0]?.headers.cookie).toBeUndefined();
  });

  it("accepts a URL object and a Request as input", async () => {
    const { fetch } = localFetch();
    const fromUrl = await fetch(new URL(`https://${HOST}:${port}/client.json`));
    expect(fromUrl.status).toBe(200);
    const fromRequest = await fetch(new Request(`https://${HOST}:${port}/client.json`));
    expect(fromRequest.status).toBe(200);
  });

  it("does not re-resolve DNS: a lookup that would change its answer is asked once", async () => {
    let asked = 0;
    const fetch = createMetadataFetch({
      lookup: async () => (asked++ === 0 ? [v4("127.0.0.1")] : [v4("10.0.0.1")]),
      allowAddress: (ip) => ip === "127.0.0.1",
      tlsCa: cert,
    });
    const response = await fetch(`https://${HOST}:${port}/client.json`);
    expect(response.status).toBe(200);
    expect(asked).toBe(1);
  });

  it("keeps certificate verification on: no trusted CA, or a name the certificate lacks, fails", async () => {
    const untrusted = createMetadataFetch({
      lookup: async () => [v4("127.0.0.1")],
      allowAddress: (ip) => ip === "127.0.0.1",
    });
    expect((await refusal(untrusted(`https://${HOST}:${port}/client.json`))).code).toBe("network");
    const { fetch } = localFetch();
    expect((await refusal(fetch(`https://other.test:${port}/client.json`))).code).toBe("network");
  });

  it("refuses a redirect without following it", async () => {
    const { fetch } = localFetch();
    seen = [];
    const error = await refusal(fetch(`https://${HOST}:${port}/redirect`, { redirect: "error" }));
    expect(error.code).toBe("redirect");
    expect(error.message).not.toContain("moved");
    expect(error.message).not.toContain("client.json");
    expect(seen.map((s) => s.url)).toEqual(["/redirect"]);
  });

  it("refuses 304 to an unconditional request, passes it through to a conditional one", async () => {
    const { fetch } = localFetch();
    expect((await refusal(fetch(`https://${HOST}:${port}/not-modified`))).code).toBe("redirect");
    const response = await fetch(`https://${HOST}:${port}/not-modified`, {
      headers: { "If-None-Match": '"v1"' },
    });
    expect(response.status).toBe(304);
    expect(response.body).toBeNull();
  });

  it("hands back an error status without its body", async () => {
    const { fetch } = localFetch();
    const response = await fetch(`https://${HOST}:${port}/missing`);
    expect(response.status).toBe(404);
    expect(response.body).toBeNull();
  });

  it("refuses a body over the cap, streamed or declared", async () => {
    const { fetch } = localFetch({ maxBytes: 4096 });
    const streamed = await refusal(fetch(`https://${HOST}:${port}/big`));
    expect(streamed.code).toBe("too_large");
    expect(streamed.message).not.toContain("xxx");
    const declared = await refusal(fetch(`https://${HOST}:${port}/big-declared`));
    expect(declared.code).toBe("too_large");
  });

  it("takes a body at the cap", async () => {
    const { fetch } = localFetch({ maxBytes: 6000 });
    const response = await fetch(`https://${HOST}:${port}/big`);
    expect((await response.text()).length).toBe(6000);
  });

  it("gives up on a server that never answers, within about the timeout", async () => {
    const { fetch } = localFetch({ timeoutMs: 300 });
    const started = Date.now();
    const error = await refusal(fetch(`https://${HOST}:${port}/stall`));
    const elapsed = Date.now() - started;
    expect(error.code).toBe("timeout");
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1500);
  });

  it("gives up on a body that stalls halfway, within about the timeout", async () => {
    const { fetch } = localFetch({ timeoutMs: 300 });
    const started = Date.now();
    const error = await refusal(fetch(`https://${HOST}:${port}/stall-body`));
    expect(error.code).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("times out a DNS lookup that never answers", async () => {
    const fetch = createMetadataFetch({
      timeoutMs: 200,
      lookup: () => new Promise<ResolvedAddress[]>(() => {}),
    });
    expect((await refusal(fetch(`https://${HOST}/client.json`))).code).toBe("timeout");
  });

  it("stops when the caller's signal aborts", async () => {
    const { fetch } = localFetch({ timeoutMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await refusal(
      fetch(`https://${HOST}:${port}/stall`, { signal: controller.signal }),
    );
    expect(error.code).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

describe("the transport's shape", () => {
  it("is what the CIMD plugin takes as fetchClientMetadataResource", () => {
    const transport: ClientMetadataResourceFetch = createMetadataFetch();
    expect(typeof transport).toBe("function");
  });
});

describe("isPublicUnicastAddress", () => {
  it.each([
    ["8.8.8.8", true],
    ["93.184.215.14", true],
    ["2606:4700::1111", true],
    ["::ffff:8.8.8.8", true],
    ["127.0.0.1", false],
    ["::1", false],
    ["10.255.0.1", false],
    ["172.15.0.1", true],
    ["172.16.0.1", false],
    ["172.32.0.1", true],
    ["100.63.255.255", true],
    ["100.64.0.1", false],
    ["169.254.169.254", false],
    ["::ffff:169.254.169.254", false],
    ["fd00:ec2::254", false],
    ["2002:7f00:1::", false],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", false],
    ["::7f00:1", false],
    ["198.18.0.1", false],
    ["not-an-ip", false],
    ["", false],
  ])("%s → %s", (ip, expected) => {
    expect(isPublicUnicastAddress(ip)).toBe(expected);
  });
});

describe("cloud metadata addresses, refused by name", () => {
  it.each([...CLOUD_METADATA_ADDRESSES, "::ffff:168.63.129.16"])(
    "refuses %s, literal or resolved, without connecting",
    async (ip) => {
      expect(isPublicUnicastAddress(ip)).toBe(false);
      const stub = stubLookup(ip.includes(":") ? v6(ip) : v4(ip));
      const fetch = createMetadataFetch({ lookup: stub.lookup });
      const host = ip.includes(":") ? `[${ip}]` : ip;
      for (const url of [
        `https://${host}:${sentinelPort}/c.json`,
        `https://${HOST}:${sentinelPort}/c.json`,
      ]) {
        expect((await refusal(fetch(url))).code).toBe("special_address");
      }
      await tick();
      expect(sentinelConnections).toBe(0);
    },
  );
});
