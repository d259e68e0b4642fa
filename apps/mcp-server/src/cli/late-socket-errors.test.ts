import { afterEach, describe, expect, it } from "vitest";
import { capturingLogger } from "../../../../test/support/logs.ts";
import { isLateSocketError, survivingLateSocketErrors } from "./late-socket-errors.ts";

const socketError = (code: string, syscall: string) =>
  Object.assign(new Error(`${syscall} ${code}`), { code, syscall, errno: -104 });

describe("late socket errors", () => {
  let installed: ((error: unknown) => void) | undefined;
  afterEach(() => {
    if (installed) process.off("uncaughtException", installed);
    installed = undefined;
  });

  it("recognises only a reset or broken pipe on a socket read or write", () => {
    expect(isLateSocketError(socketError("ECONNRESET", "read"))).toBe(true);
    expect(isLateSocketError(socketError("EPIPE", "write"))).toBe(true);
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
});
