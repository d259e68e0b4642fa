import { afterEach, describe, expect, it } from "vitest";
import { capturingLogger } from "../../../test/support/logs.ts";
import { isLateSocketError, survivingLateSocketErrors } from "./late-socket-errors.ts";

const socketError = (code: string, syscall: string) =>
  Object.assign(new Error(`${syscall} ${code}`), { code, syscall, errno: -104 });

/** postgres.js's error for a connection that closed under its queries (`Errors.connection`). */
const postgresClosed = () =>
  Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), {
    code: "CONNECTION_CLOSED",
    errno: "CONNECTION_CLOSED",
    address: ["127.0.0.1"],
    port: [5432],
  });

describe("late socket errors", () => {
  let installed: ((error: unknown) => void) | undefined;
  afterEach(() => {
    if (installed) process.off("uncaughtException", installed);
    if (installed) process.off("unhandledRejection", installed);
    installed = undefined;
  });

  it("recognises only a reset or broken pipe on a socket read or write", () => {
    expect(isLateSocketError(socketError("ECONNRESET", "read"))).toBe(true);
    expect(isLateSocketError(socketError("EPIPE", "write"))).toBe(true);
    expect(isLateSocketError(postgresClosed())).toBe(true);
    expect(isLateSocketError(Object.assign(postgresClosed(), { errno: -104 }))).toBe(false);
    expect(isLateSocketError(Object.assign(postgresClosed(), { code: "CONNECT_TIMEOUT" }))).toBe(
      false,
    );
    expect(isLateSocketError(socketError("ECONNREFUSED", "connect"))).toBe(false);
    expect(isLateSocketError(socketError("ECONNRESET", "connect"))).toBe(false);
    expect(isLateSocketError(new TypeError("x is undefined"))).toBe(false);
    expect(isLateSocketError(undefined)).toBe(false);
  });

  it("logs and drops a late socket error, and ends the process with 1 on anything else", () => {
    const { logger, logs: lines } = capturingLogger("info");
    const exits: number[] = [];
    installed = survivingLateSocketErrors(logger, (code) => exits.push(code));
    installed(socketError("ECONNRESET", "read"));
    expect(exits).toEqual([]);
    expect(lines.join("")).toContain("after its connection closed");
    installed(new TypeError("a real bug"));
    expect(exits).toEqual([1]);
    expect(lines.join("")).toContain("uncaught exception");
  });

  it("applies the same rule to unhandled rejections", () => {
    const { logger } = capturingLogger("info");
    const exits: number[] = [];
    installed = survivingLateSocketErrors(logger, (code) => exits.push(code));
    expect(process.listeners("unhandledRejection")).toContain(installed);
    installed(postgresClosed());
    expect(exits).toEqual([]);
  });
});
