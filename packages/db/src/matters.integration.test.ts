import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import { addMember } from "./directory.ts";
import { addScreen, addToTeam, createMatter, holdMatter, releaseMatter } from "./matters.ts";
import type { Tenant } from "./tenant.ts";
import { withOrganization } from "./tenant.ts";

/**
 * SPEC §5a in PostgreSQL, through SQL as the app login role: the memories policies and the
 * recall candidate functions apply the may-see rule for the transaction's user, so a query that
 * forgets every filter still reads nothing of a restricted matter it is not on the team of, nor
 * of a matter it is screened from — manager or not. And a legal hold keeps a matter's memories
 * live past their expiry, out of the purge and out of erasure, until it is released.
 */

type Sql = postgres.TransactionSql;

let db: TestDatabase;
let firm: Workspace;
let other: Workspace;
/** On the restricted matter's team. */
let teamMember: Tenant;
/** Screened from the open matter. */
let screened: Tenant;
const matter: Record<"restricted" | "open" | "held", string> = {
  restricted: "",
  open: "",
  held: "",
};
const memoryIn: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  firm = await createWorkspace(db.owner.db, "Walls");
  other = await createWorkspace(db.owner.db, "Elsewhere");
  const added = async (email: string) => {
    const m = await addMember(db.owner.db, { organizationId: firm.organizationId, email });
    return { organizationId: firm.organizationId, userId: m.userId };
  };
  teamMember = await added("team@walls.test");
  screened = await added("screened@walls.test");
  await withOrganization(db.owner.db, firm.organizationId, async (tx) => {
    const restricted = await createMatter(tx, {
      organizationId: firm.organizationId,
      reference: "2026/0042",
      name: "Dupont v. Martin",
      client: "Jean Dupont",
      access: "restricted",
    });
    const open = await createMatter(tx, {
      organizationId: firm.organizationId,
      reference: "OPEN-1",
      name: "Open matter",
      access: "open",
    });
    const held = await createMatter(tx, {
      organizationId: firm.organizationId,
      reference: "HOLD-1",
      name: "Litigation",
      access: "open",
    });
    matter.restricted = restricted.id;
    matter.open = open.id;
    matter.held = held.id;
    for (const userId of [teamMember.userId, firm.manager.userId]) {
      await addToTeam(tx, { organizationId: firm.organizationId, matterId: restricted.id, userId });
    }
    // The manager is on the restricted team but screened from it: the screen wins.
    await addScreen(tx, {
      organizationId: firm.organizationId,
      matterId: restricted.id,
      userId: firm.manager.userId,
      reason: "Former counsel of the other side",
    });
    await addScreen(tx, {
      organizationId: firm.organizationId,
      matterId: open.id,
      userId: screened.userId,
      reason: "Lateral hire from the opposing firm",
    });
  });
  const seed = async (name: string, matterId: string | null, expires = "1 day") => {
    const [row] = await db.owner.client<{ id: string }[]>`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at, matter_id)
      values (${firm.organizationId}, ${teamMember.userId}, 'fact', 'stated',
              ${`Settlement authority memo ${name}`}, 'walls', now() + ${expires}::interval, ${matterId})
      returning id`;
    memoryIn[name] = row?.id ?? "";
  };
  await seed("firm-wide", null);
  await seed("restricted", matter.restricted);
  await seed("open", matter.open);
  await seed("held-expired", matter.held, "-1 day");
});
afterAll(async () => {
  await db?.drop();
});

async function asTenant<T>(tenant: Tenant, work: (sql: Sql) => Promise<T>): Promise<T> {
  return (await db.app.client.begin(async (sql) => {
    await sql`select set_config('north.organization_id', ${tenant.organizationId}, true),
                     set_config('north.user_id', ${tenant.userId}, true)`;
    return work(sql);
  })) as T;
}

const names = (rows: { id: string }[]) =>
  rows.map((r) => Object.entries(memoryIn).find(([, id]) => id === r.id)?.[0] ?? r.id).sort();

/** Every memory the user can read with no filter at all. */
const everythingReadable = (tenant: Tenant) =>
  asTenant(tenant, (sql) => sql<{ id: string }[]>`select id from memories`);

describe("the may-see rule in PostgreSQL, as the app role", () => {
  it("a plain member reads the firm-wide and open matters' memories, nothing of a restricted one", async () => {
    expect(names(await everythingReadable(firm.member))).toEqual([
      "firm-wide",
      "held-expired",
      "open",
    ]);
  });

  it("the restricted matter's team reads its memories", async () => {
    expect(names(await everythingReadable(teamMember))).toContain("restricted");
  });

  it("a screened member reads nothing of the matter they are screened from", async () => {
    expect(names(await everythingReadable(screened))).toEqual(["firm-wide", "held-expired"]);
  });

  it("a screen wins over the team and the manager role", async () => {
    expect(names(await everythingReadable(firm.manager))).not.toContain("restricted");
  });

  it("another organisation reads none of it", async () => {
    expect(await everythingReadable(other.member)).toEqual([]);
  });

  it("the full-text candidate function gives a screened or off-team user nothing of the matter, even when named", async () => {
    const candidates = (tenant: Tenant, matterId: string | null) =>
      asTenant(
        tenant,
        (sql) => sql<{ id: string }[]>`
          select id from public.memory_fulltext_candidates('settlement', null, null, 20, 200, ${matterId}::uuid)`,
      );
    expect(names(await candidates(firm.member, matter.restricted))).toEqual(["firm-wide"]);
    expect(names(await candidates(firm.manager, matter.restricted))).toEqual(["firm-wide"]);
    expect(names(await candidates(screened, matter.open))).toEqual(["firm-wide"]);
    expect(names(await candidates(teamMember, matter.restricted))).toEqual([
      "firm-wide",
      "restricted",
    ]);
    // Without a matter: firm-wide only, whatever the caller may see.
    expect(names(await candidates(teamMember, null))).toEqual(["firm-wide"]);
  });

  it("refuses to write a memory into a matter the user may not see", async () => {
    const writing = asTenant(
      firm.member,
      (sql) => sql`
        insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at, matter_id)
        values (${firm.organizationId}, ${firm.member.userId}, 'fact', 'stated', 'smuggled', 'walls',
                now() + interval '1 day', ${matter.restricted})`,
    );
    await expect(writing).rejects.toMatchObject({ code: "42501" });
  });

  it("erases nothing of a matter the user may not see, manager or not", async () => {
    const erased = await asTenant(
      firm.manager,
      (sql) => sql<{ id: string }[]>`
        update memories set body = null, subject_id = null, embedding = null, forgotten_at = now()
        where matter_id = ${matter.restricted} returning id`,
    );
    expect(erased).toEqual([]);
  });

  it("counts a subject's memories in matters the user may not see, and reads none of them", async () => {
    const fingerprint = "a".repeat(64);
    await db.owner.client`
      update memories set kind = 'observation', subject_type = 'person', subject_id = 'Jean Dupont',
                          subject_fingerprint = ${fingerprint}
      where id in ${db.owner.client([memoryIn.restricted ?? "", memoryIn["firm-wide"] ?? ""])}`;
    const withheld = (tenant: Tenant) =>
      asTenant(
        tenant,
        (sql) => sql<{ n: number }[]>`select public.memories_withheld(${fingerprint}, null) as n`,
      );
    expect((await withheld(firm.member))[0]?.n).toBe(1);
    expect((await withheld(teamMember))[0]?.n).toBe(0);
  });
});

describe("a legal hold, in PostgreSQL", () => {
  const liveIds = (tenant: Tenant) =>
    asTenant(
      tenant,
      (sql) => sql<{ id: string }[]>`
        select id from memories m
        where m.forgotten_at is null and m.purged_at is null and m.superseded_by is null
          and (m.expires_at > now() or m.matter_id = any ((select public.north_held_matters())::uuid[]))`,
    );

  it("keeps a held matter's memories live past their expiry, out of the purge and out of erasure", async () => {
    await withOrganization(db.owner.db, firm.organizationId, (tx) =>
      holdMatter(tx, { matterId: matter.held, reason: "Litigation hold, case 24/1234" }),
    );
    expect(names(await liveIds(firm.member))).toContain("held-expired");
    await db.maintenance.client`select * from public.purge_expired_memories()`;
    const [kept] = await db.owner.client<{ body: string | null }[]>`
      select body from memories where id = ${memoryIn["held-expired"] ?? ""}`;
    expect(kept?.body).not.toBeNull();
  });

  it("after release, expiry applies again and the next purge takes what expired meanwhile", async () => {
    // Held (again, so this check stands alone), then released.
    await withOrganization(db.owner.db, firm.organizationId, (tx) =>
      holdMatter(tx, { matterId: matter.held, reason: "Litigation hold, case 24/1234" }),
    );
    expect(names(await liveIds(firm.member))).toContain("held-expired");
    const released = await withOrganization(db.owner.db, firm.organizationId, (tx) =>
      releaseMatter(tx, { matterId: matter.held }),
    );
    expect(released).toBe(true);
    expect(names(await liveIds(firm.member))).not.toContain("held-expired");
    await db.maintenance.client`select * from public.purge_expired_memories()`;
    const [gone] = await db.owner.client<{ body: string | null; purged_at: Date | null }[]>`
      select body, purged_at from memories where id = ${memoryIn["held-expired"] ?? ""}`;
    expect(gone).toMatchObject({ body: null });
    expect(gone?.purged_at).not.toBeNull();
  });
});
