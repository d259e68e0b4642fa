import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createWorkspace } from "../support/fixtures.ts";
import { useTestApp } from "../support/mcp.ts";
import { forget, remember } from "../support/memory-tools.ts";
import { northJson } from "../support/processes.ts";

/**
 * Finding 13: after forget + VACUUM + CHECKPOINT the body was still in the table's heap and
 * index files. `north purge --full` rewrites the table and its indexes into new files and
 * checkpoints; what can still hold the bytes afterwards (WAL not yet recycled, backups,
 * replicas) is documented in docs/security.md with the operator's steps.
 */

const { db, harness } = useTestApp();

/** Every file of the memories table, its TOAST table and its indexes, read as bytes. */
async function memoryFiles(): Promise<Buffer[]> {
  const [where] = await db.owner.client<{ dir: string }[]>`
    select current_setting('data_directory') as dir`;
  const files = await db.owner.client<{ file: string }[]>`
    select pg_relation_filepath(c.oid) as file from pg_class c
    where c.oid = 'public.memories'::regclass
       or c.oid = (select reltoastrelid from pg_class where oid = 'public.memories'::regclass)
       or c.oid in (select indexrelid from pg_index where indrelid = 'public.memories'::regclass)`;
  const buffers: Buffer[] = [];
  for (const { file } of files) {
    if (!file) continue;
    const full = path.join(where?.dir ?? "", file);
    const dir = path.dirname(full);
    for (const name of await readdir(dir)) {
      // The main fork and its segments (.1, .2 …), not the free-space or visibility maps.
      if (name === path.basename(full) || name.startsWith(`${path.basename(full)}.`)) {
        buffers.push(await readFile(path.join(dir, name)));
      }
    }
  }
  return buffers;
}

describe("erasure reaches the disk", () => {
  it("leaves no forgotten body in the table's or its indexes' files after north purge --full", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.manager, { role: "manager" });
    const secret = `DISK-SENTINEL-${randomUUID()}`;
    await remember(client, { kind: "fact", origin: "stated", body: `${secret} filed in Lyon.` });
    await db.owner.client`checkpoint`;
    const before = await memoryFiles();
    expect(before.some((b) => b.includes(secret))).toBe(true);

    const [row] = await db.owner.client`select id from memories where body like ${`${secret}%`}`;
    await forget(client, { memory_id: row?.id as string });
    const result = await northJson<{ reclaimed: string[] }>(["purge", "--full"], {
      DATABASE_URL: db.ownerUrl,
    });
    expect(result.reclaimed).toEqual(expect.arrayContaining(["vacuum full", "checkpoint"]));
    const after = await memoryFiles();
    expect(after.length).toBeGreaterThan(0);
    expect(after.some((b) => b.includes(secret))).toBe(false);
  }, 60_000);
});
