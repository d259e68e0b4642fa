import { describe, expect, it } from "vitest";
import { createTenantGate } from "./tenant-gate.ts";

const deferred = () => {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

describe("the per-organisation gate", () => {
  it("runs at most N calls of one organisation at once, and others' calls without waiting", async () => {
    const gate = createTenantGate({ perOrganization: 2, maxWaitMs: 1_000 });
    const hold = deferred();
    let running = 0;
    let peak = 0;
    const busy = () =>
      gate.run("org-a", async () => {
        running++;
        peak = Math.max(peak, running);
        await hold.promise;
        running--;
        return "a";
      });
    const calls = [busy(), busy(), busy(), busy()];
    const other = await gate.run("org-b", async () => "b");
    expect(other).toEqual({ ok: true, value: "b" });
    expect(running).toBe(2);
    hold.resolve();
    expect(await Promise.all(calls)).toEqual(Array(4).fill({ ok: true, value: "a" }));
    expect(peak).toBe(2);
  });

  it("refuses a call that waited longer than maxWaitMs, without running it", async () => {
    const gate = createTenantGate({ perOrganization: 1, maxWaitMs: 20 });
    const hold = deferred();
    const first = gate.run("org", () => hold.promise);
    let ran = false;
    const second = await gate.run("org", async () => {
      ran = true;
    });
    expect(second).toEqual({ ok: false });
    expect(ran).toBe(false);
    hold.resolve();
    expect(await first).toEqual({ ok: true, value: undefined });
    expect(await gate.run("org", async () => 1)).toEqual({ ok: true, value: 1 });
  });

  it("frees the slot when the work fails", async () => {
    const gate = createTenantGate({ perOrganization: 1, maxWaitMs: 20 });
    await expect(gate.run("org", async () => Promise.reject(new Error("boom")))).rejects.toThrow();
    expect(await gate.run("org", async () => 2)).toEqual({ ok: true, value: 2 });
  });
});
