import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  addMember,
  addScreen,
  addToTeam,
  createApiToken,
  createMatter,
  holdMatter,
  releaseMatter,
  removeScreen,
  type Tenant,
  withOrganization,
} from "@north/db";
import { type Embedder, EmbedderUnavailableError } from "@north/mcp-server";
import { buildAdminApp } from "@north/web";
import type postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { createHashingEmbedder } from "../support/embedder.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { capturingLogger } from "../support/logs.ts";
import { ALL_SCOPES, TEST_AUDIT_KEY, useTestApp } from "../support/mcp.ts";
import { briefing, call, forget, recall, remember } from "../support/memory-tools.ts";

/**
 * Attacks on the ethical walls (SPEC §5a; decision 038), each written to pass while the wall
 * holds. The attacker is a member screened from a matter, a member off a restricted matter's
 * team, a manager screened from a matter (on its team, even), or code holding the app login
 * role. The walls tried: the tools (recall, briefing, remember, held, forget, supersedes), the
 * SQL policies and SECURITY DEFINER functions as the app role, the console, the legal hold, and
 * the logs and audit ledger.
 */

// An embedder the suite can turn off (recall then runs its full-text statement) or make run a
// step between a tool's matter check and its insert (a screen landing mid-call).
const hashing = createHashingEmbedder();
const embedderControl: { off: boolean; before?: () => Promise<void> } = { off: false };
const embedder: Embedder = {
  async embed(texts) {
    const before = embedderControl.before;
    embedderControl.before = undefined;
    if (before) await before();
    if (embedderControl.off) throw new EmbedderUnavailableError("unreachable");
    return hashing.embed(texts);
  },
};

const { db, harness } = useTestApp({ embedder });

type Sql = postgres.TransactionSql;

/** A restricted matter: team = teamMember and the manager; the manager is screened from it. */
const RESTRICTED = "DUP/2026.0042";
/** An open matter: `screened` is screened from it. */
const OPEN = "ACME-7";
/** An open matter under legal hold. */
const HELD = "LIT-9";
/** Another organisation's matter. */
const FOREIGN = "OTHER-1";

const SECRET_R = "Zanzibar settlement authority: the client accepts up to 2 million";
const SECRET_O = "Quokka counterclaim is weak on causation";
const SECRET_FOREIGN = "Foreign firm xylophone strategy";
const FIRM_WIDE = "Zanzibar and quokka filings at the Lyon court go through RPVA";
/** A subject with memories in the restricted matter and the open matter only. */
const SUBJECT = { subject_type: "client", subject_id: "Zed Hidden" };
/** A subject whose only memory sits in the restricted matter. */
const WALLED = { subject_type: "client", subject_id: "Paula Walled" };
const SECRET_WALLED = "Paula Walled wants the merger kept from the regulator";

let firm: Workspace;
let other: Workspace;
let teamMember: Tenant;
let screened: Tenant;
const matterId = { restricted: "", open: "", held: "" };
const memory = { restricted: "", open: "", firmWide: "", walled: "" };
const clients = {} as Record<"member" | "team" | "screened" | "manager" | "foreign", Client>;

beforeAll(async () => {
  firm = await createWorkspace(db.owner.db, "Walls");
  other = await createWorkspace(db.owner.db, "Elsewhere");
  const added = async (email: string) => {
    const m = await addMember(db.owner.db, { organizationId: firm.organizationId, email });
    return { organizationId: firm.organizationId, userId: m.userId };
  };
  teamMember = await added("team@walls.test");
  screened = await added("screened@walls.test");
  const organizationId = firm.organizationId;
  await withOrganization(db.owner.db, organizationId, async (tx) => {
    const restricted = await createMatter(tx, {
      organizationId,
      reference: RESTRICTED,
      name: "Dupont v. Martin",
      client: "Zed Hidden",
      access: "restricted",
    });
    const open = await createMatter(tx, {
      organizationId,
      reference: OPEN,
      name: "Acme",
      access: "open",
    });
    const held = await createMatter(tx, {
      organizationId,
      reference: HELD,
      name: "Litigation",
      access: "open",
    });
    matterId.restricted = restricted.id;
    matterId.open = open.id;
    matterId.held = held.id;
    for (const userId of [teamMember.userId, firm.manager.userId]) {
      await addToTeam(tx, { organizationId, matterId: restricted.id, userId });
    }
    await addScreen(tx, {
      organizationId,
      matterId: restricted.id,
      userId: firm.manager.userId,
      reason: "Former counsel of the other side",
    });
    await addScreen(tx, {
      organizationId,
      matterId: open.id,
      userId: screened.userId,
      reason: "Lateral hire",
    });
    await holdMatter(tx, { matterId: held.id, reason: "Litigation hold" });
  });
  await withOrganization(db.owner.db, other.organizationId, (tx) =>
    createMatter(tx, {
      organizationId: other.organizationId,
      reference: FOREIGN,
      name: "Foreign",
      access: "open",
    }),
  );
  clients.member = await harness.connect(firm.member);
  clients.team = await harness.connect(teamMember);
  clients.screened = await harness.connect(screened);
  clients.manager = await harness.connect(firm.manager, { scopes: ALL_SCOPES, role: "manager" });
  clients.foreign = await harness.connect(other.member);

  const stored = async (client: Client, args: Parameters<typeof remember>[1]) => {
    const answer = await remember(client, args);
    expect(answer.structured).toMatchObject({ outcome: "created" });
    return String(answer.structured?.memory_id);
  };
  memory.restricted = await stored(clients.team, {
    kind: "observation",
    origin: "stated",
    body: SECRET_R,
    ...SUBJECT,
    matter: RESTRICTED,
  });
  memory.open = await stored(clients.team, {
    kind: "observation",
    origin: "stated",
    body: SECRET_O,
    ...SUBJECT,
    matter: OPEN,
  });
  memory.firmWide = await stored(clients.team, { kind: "fact", origin: "stated", body: FIRM_WIDE });
  memory.walled = await stored(clients.team, {
    kind: "observation",
    origin: "stated",
    body: SECRET_WALLED,
    ...WALLED,
    matter: RESTRICTED,
  });
  await stored(clients.foreign, {
    kind: "fact",
    origin: "stated",
    body: SECRET_FOREIGN,
    matter: FOREIGN,
  });
});

/** A transaction as the app login role with this tenant set, as the server sets it. */
async function asTenant<T>(
  tenant: { organizationId: string; userId?: string },
  work: (sql: Sql) => Promise<T>,
): Promise<T> {
  return (await db.app.client.begin(async (sql) => {
    await sql`select set_config('north.organization_id', ${tenant.organizationId}, true),
                     set_config('north.user_id', ${tenant.userId ?? ""}, true)`;
    return work(sql);
  })) as T;
}

/** The SQLSTATE a statement fails with, or its rows. */
const outcomeOf = (attempt: Promise<unknown>) =>
  attempt.then(
    (rows) => ({ rows }),
    (error: { code?: string }) => ({ code: error.code }),
  );

const live = async (id: string) => {
  const [row] = await db.owner.client<{ body: string | null; superseded_by: string | null }[]>`
    select body, superseded_by from memories where id = ${id}`;
  return row;
};

const fingerprintOf = async (id: string) => {
  const [row] = await db.owner.client<{ fp: string }[]>`
    select subject_fingerprint as fp from memories where id = ${id}`;
  return row?.fp ?? "";
};

/** Everything a tool answered, as one string to search for what must not be there. */
const everything = (answer: unknown) => JSON.stringify(answer);

describe("the tools: a matter's memories stay behind its wall", () => {
  for (const mode of ["semantic", "fulltext"] as const) {
    it(`recall (${mode}) gives no one a matter's memories without the matter named, and never a hidden one`, async () => {
      embedderControl.off = mode === "fulltext";
      try {
        for (const client of Object.values(clients)) {
          for (const query of ["zanzibar settlement", "quokka counterclaim", undefined]) {
            const answer = await recall(client, { query, limit: 20 });
            expect(answer.isError).toBe(false);
            const text = everything(answer);
            for (const secret of [SECRET_R, SECRET_O, SECRET_WALLED, SECRET_FOREIGN]) {
              expect(text).not.toContain(secret);
            }
            expect(text).not.toContain(memory.restricted);
            expect(text).not.toContain(memory.open);
          }
        }
        // With the matter named: its own memories and nobody else's.
        const team = await recall(clients.team, {
          query: "zanzibar settlement",
          matter: RESTRICTED,
        });
        expect(team.structured.block).toContain(SECRET_R);
        expect(team.structured.block).not.toContain(SECRET_O);
        const member = await recall(clients.member, { query: "quokka zanzibar", matter: OPEN });
        expect(member.structured.block).toContain(SECRET_O);
        expect(everything(member)).not.toContain(SECRET_R);
        if (mode === "fulltext") expect(member.structured.mode).toBe("fulltext");
      } finally {
        embedderControl.off = false;
      }
    });
  }

  it("recall by the subject of a hidden memory returns nothing of it, with or without a matter", async () => {
    for (const client of [clients.member, clients.screened, clients.manager]) {
      const bySubject = await recall(client, { ...SUBJECT, limit: 20 });
      expect(everything(bySubject)).not.toContain(SECRET_R);
      expect(everything(bySubject)).not.toContain(SECRET_O);
      const walled = await recall(client, { ...WALLED, query: "merger regulator" });
      expect(everything(walled)).not.toContain(SECRET_WALLED);
    }
    const inOpen = await recall(clients.member, { ...SUBJECT, matter: OPEN });
    expect(inOpen.structured.block).toContain(SECRET_O);
    expect(everything(inOpen)).not.toContain(SECRET_R);
  });

  it("the briefing shows a matter's memories only with it named, and only to those who may see it", async () => {
    for (const client of Object.values(clients)) {
      const text = everything(await briefing(client));
      for (const secret of [SECRET_R, SECRET_O, SECRET_WALLED, SECRET_FOREIGN]) {
        expect(text).not.toContain(secret);
      }
    }
    const member = everything(await briefing(clients.member, { matter: OPEN }));
    expect(member).toContain(SECRET_O);
    expect(member).not.toContain(SECRET_R);
    const manager = await briefing(clients.manager, { matter: RESTRICTED });
    expect(manager.isError).toBe(true);
    expect(everything(manager)).not.toContain(SECRET_R);
  });

  it("refuses every matter the caller may not see with one receipt, whatever the reference trick", async () => {
    const probes: [Client, string][] = [
      [clients.member, RESTRICTED], // restricted, off its team
      [clients.member, RESTRICTED.toLowerCase()], // the same, another case
      [clients.manager, RESTRICTED], // on the team but screened, and a manager
      [clients.manager, "dup/2026.0042"],
      [clients.screened, OPEN], // screened from an open matter
      [clients.screened, "acme-7"],
      [clients.member, FOREIGN], // another organisation's
      [clients.foreign, RESTRICTED], // this organisation's, from another
      [clients.member, "NO-SUCH-1"], // does not exist
      [clients.member, "DUP/2026.004_"], // a LIKE wildcard must not match
      [clients.member, `${RESTRICTED} `], // malformed: trailing space
      [clients.member, `${RESTRICTED}\n`], // malformed: trailing newline
      [clients.member, "ＤUP/2026.0042"], // a full-width look-alike
      [clients.screened, "ACME\u200B-7"], // a zero-width space
      [clients.screened, "AÇME-7"], // an accented look-alike
      [clients.member, "DUP/2026.0042' OR '1'='1"],
      [clients.member, ""],
      [clients.member, "a".repeat(65)],
      [clients.member, "a".repeat(200)],
    ];
    const recalls = new Set<string>();
    const briefings = new Set<string>();
    const remembers = new Set<string>();
    for (const [client, matter] of probes) {
      const r = await call(client, "north__memory_recall", { query: "zanzibar quokka", matter });
      expect(r.isError).toBe(true);
      recalls.add(everything(r));
      const b = await briefing(client, { matter });
      expect(b.isError).toBe(true);
      briefings.add(everything(b));
      const w = await remember(client, {
        kind: "fact",
        origin: "stated",
        body: `Smuggled ${randomUUID()}`,
        matter,
      });
      expect(w.isError).toBe(true);
      remembers.add(everything(w));
    }
    expect([...recalls]).toEqual([expect.stringContaining("NORTH_MATTER_UNAVAILABLE")]);
    expect(briefings.size).toBe(1);
    expect([...remembers]).toEqual([expect.stringContaining("NORTH_MATTER_UNAVAILABLE")]);
    const [smuggled] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from memories where body like 'Smuggled %'`;
    expect(smuggled?.n).toBe(0);
    // The team's own case trick works: the wall is about who asks, not how it is spelled.
    const team = await recall(clients.team, { query: "zanzibar", matter: "dup/2026.0042" });
    expect(team.structured.block).toContain(SECRET_R);
  });

  it("a hidden matter and a missing one look alike even when the call has another fault", async () => {
    for (const matter of [RESTRICTED, "NO-SUCH-2"]) {
      const badBody = await remember(clients.member, {
        kind: "observation",
        origin: "stated",
        body: "",
        matter,
      });
      expect(badBody.structured).toMatchObject({ code: "NORTH_MATTER_UNAVAILABLE" });
      const badSubject = await call(clients.member, "north__memory_recall", {
        subject_type: "NOT A TYPE!",
        subject_id: "x",
        matter,
      });
      expect(badSubject.text).toMatch(/NORTH_MATTER_UNAVAILABLE/);
    }
  });

  it("supersedes naming a hidden memory is refused like a missing one, and the hidden memory is untouched", async () => {
    const attempt = (client: Client, id: string, matter?: string) =>
      remember(client, {
        kind: "fact",
        origin: "stated",
        body: `Correction ${randomUUID()}`,
        ...(matter ? { matter } : {}),
        supersedes: [id],
      } as Parameters<typeof remember>[1]);
    const hidden = [
      await attempt(clients.member, memory.restricted),
      await attempt(clients.manager, memory.restricted),
      await attempt(clients.screened, memory.open),
      await attempt(clients.member, memory.restricted, OPEN),
    ];
    const missing = await attempt(clients.member, randomUUID());
    for (const answer of hidden) {
      expect(answer.structured).toMatchObject({ code: "NORTH_SUPERSEDES_INVALID" });
      expect(answer.text).toBe(missing.text);
    }
    expect(await live(memory.restricted)).toEqual({ body: SECRET_R, superseded_by: null });
    expect(await live(memory.open)).toEqual({ body: SECRET_O, superseded_by: null });
  });

  it("forget by the id of a hidden memory answers as for an id that does not exist, and erases nothing", async () => {
    const missing = await forget(clients.member, { memory_id: randomUUID() });
    expect(missing.structured).toMatchObject({ code: "NORTH_NOT_FOUND" });
    for (const [client, id] of [
      [clients.member, memory.restricted],
      [clients.manager, memory.restricted],
      [clients.screened, memory.open],
    ] as const) {
      const answer = await forget(client, { memory_id: id });
      expect(answer.text).toBe(missing.text);
      expect(answer.structured).toEqual(missing.structured);
    }
    expect((await live(memory.restricted))?.body).toBe(SECRET_R);
    expect((await live(memory.open))?.body).toBe(SECRET_O);
  });

  it("a manager's erasure by subject erases nothing behind a wall", async () => {
    // The manager may see the open matter, not the restricted one: only what is walled is asked.
    const answer = await forget(clients.manager, WALLED);
    expect(answer.isError).toBe(false);
    expect((await live(memory.walled))?.body).toBe(SECRET_WALLED);
    const bySkipped = await forget(clients.screened, SUBJECT);
    expect(bySkipped.structured).toMatchObject({ forgotten: 0 });
    expect((await live(memory.open))?.body).toBe(SECRET_O);
  });

  it("held lists only what the caller may see and counts the rest, leaking no id, matter or body", async () => {
    const asMember = await call(clients.member, "north__memory_held", SUBJECT);
    expect(asMember.structured).toMatchObject({ withheld: 1 });
    expect(asMember.structured?.memories).toEqual([
      expect.objectContaining({ memory_id: memory.open, matter: OPEN }),
    ]);
    const asScreened = await call(clients.screened, "north__memory_held", SUBJECT);
    expect(asScreened.structured).toMatchObject({ withheld: 2, memories: [] });
    for (const answer of [asMember, asScreened]) {
      const text = everything(answer).toLowerCase();
      expect(text).not.toContain(memory.restricted);
      expect(text).not.toContain(RESTRICTED.toLowerCase());
      expect(text).not.toContain(SECRET_R.toLowerCase());
      expect(text).not.toContain("dupont v. martin");
    }
    expect(everything(asScreened)).not.toContain(memory.open);
    expect(everything(asScreened)).not.toContain(SECRET_O);
  });
});

describe("superseding across a wall", () => {
  it("a matter's memory that supersedes a firm-wide one does not put a hidden memory's id in a colleague's held", async () => {
    const subject = { subject_type: "court", subject_id: "Tribunal de Lyon" };
    const firmWide = await remember(clients.member, {
      kind: "fact",
      origin: "stated",
      body: "The Lyon tribunal hears commercial cases on Tuesdays",
      ...subject,
    });
    const firmWideId = String(firmWide.structured?.memory_id);
    const replacement = await remember(clients.team, {
      kind: "fact",
      origin: "stated",
      body: "For Dupont, the Lyon tribunal moved our hearing to a secret Friday session",
      ...subject,
      matter: RESTRICTED,
      supersedes: [firmWideId],
    } as Parameters<typeof remember>[1]);
    if (replacement.structured?.outcome !== "created") return; // refused: the wall held
    const hiddenId = String(replacement.structured?.memory_id);
    const asMember = await call(clients.member, "north__memory_held", subject);
    expect(everything(asMember)).not.toContain(hiddenId);
  });

  it("a matter's memory cannot retire a firm-wide memory for colleagues who may not see the matter", async () => {
    const body = "Opposing counsel Maître Blanc always asks for a postponement";
    const firmWide = await remember(clients.member, { kind: "fact", origin: "stated", body });
    const firmWideId = String(firmWide.structured?.memory_id);
    await remember(clients.team, {
      kind: "fact",
      origin: "stated",
      body: "In Dupont, Maître Blanc agreed to no postponement",
      matter: RESTRICTED,
      supersedes: [firmWideId],
    } as Parameters<typeof remember>[1]);
    const seen = await recall(clients.member, { query: "Maître Blanc postponement" });
    expect(seen.structured.block).toContain(body);
  });
});

describe("forget and the console tell a screened caller the truth about what remains", () => {
  it("forget by subject never says nothing remains while memories behind a wall are still held", async () => {
    const answer = await forget(clients.manager, WALLED);
    expect((await live(memory.walled))?.body).toBe(SECRET_WALLED);
    expect(answer.text).not.toMatch(/Nothing about this subject remains/);
  });
});

describe("PostgreSQL as the app login role", () => {
  it("a plain select reads nothing behind a wall, for a screened manager, an off-team member and a screened member", async () => {
    const bodies = (tenant: Tenant) =>
      asTenant(tenant, (sql) => sql<{ body: string }[]>`select body from memories`);
    const member = everything(await bodies(firm.member));
    expect(member).not.toContain(SECRET_R);
    expect(member).toContain(SECRET_O);
    expect(everything(await bodies(firm.manager))).not.toContain(SECRET_R);
    expect(everything(await bodies(screened))).not.toContain(SECRET_O);
    expect(everything(await bodies(other.member))).not.toContain(SECRET_R);
  });

  it("a transaction with no user set reads no matter's memories", async () => {
    const rows = await asTenant(
      { organizationId: firm.organizationId },
      (sql) => sql<{ matter_id: string | null }[]>`select matter_id from memories`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.matter_id === null)).toBe(true);
  });

  it("the full-text candidate function gives nothing behind a wall, whatever matter and subject it is named", async () => {
    const fingerprint = await fingerprintOf(memory.restricted);
    const candidates = (tenant: Tenant, matter: string | null, subject: string | null) =>
      asTenant(
        tenant,
        (sql) => sql<{ id: string }[]>`
          select id from public.memory_fulltext_candidates(
            'zanzibar quokka settlement counterclaim', ${subject}::text, null, 100, 1000, ${matter}::uuid)`,
      );
    for (const [tenant, matter] of [
      [firm.member, matterId.restricted],
      [firm.manager, matterId.restricted],
      [screened, matterId.open],
      [other.member, matterId.restricted],
    ] as const) {
      for (const subject of [null, fingerprint]) {
        const ids = (await candidates(tenant, matter, subject)).map((r) => r.id);
        expect(ids).not.toContain(memory.restricted);
        if (tenant === screened) expect(ids).not.toContain(memory.open);
      }
    }
    const firmWideOnly = (await candidates(teamMember, null, null)).map((r) => r.id);
    expect(firmWideOnly).toEqual([memory.firmWide]);
  });

  /**
   * Decision 039: a matter's lexemes carry the matter's tag. The tag is a hint for the index and
   * the planner, never a key: a query spelt with the restricted matter's tag, or with its
   * organisation's, must still find nothing of a matter the caller may not see.
   */
  it("a query spelt with a matter's search tag, or a matter sharing the firm's tag, finds nothing behind the wall", async () => {
    const tag = matterId.restricted.slice(-8);
    const queries = [
      `${tag}:zanzibar`,
      `${tag}:zanzibar ${tag}:settlement`,
      `'${tag}:zanzibar'`,
      `${tag}zanzibar`,
      `${firm.organizationId.slice(-8)}:${tag}:zanzibar`,
    ];
    for (const [tenant, matter] of [
      [firm.member, null],
      [firm.member, matterId.restricted],
      [firm.member, matterId.open],
      [firm.manager, matterId.restricted],
      [screened, matterId.restricted],
    ] as const) {
      for (const query of queries) {
        const rows = await asTenant(
          tenant,
          (sql) => sql<{ id: string }[]>`
            select id from public.memory_fulltext_candidates(
              ${query}, null, null, 100, 1000, ${matter}::uuid)`,
        );
        expect(
          rows.map((r) => r.id),
          query,
        ).not.toContain(memory.restricted);
      }
    }
    // Tags are 32 bits: a restricted matter whose tag is its organisation's own shares the
    // firm-wide index entries, and only the explicit scope conditions keep its memories out.
    const collided = `${crypto.randomUUID().slice(0, 24)}${firm.organizationId.slice(-12)}`;
    await db.owner.client`
      insert into matters (id, organization_id, reference, name, access)
      values (${collided}, ${firm.organizationId}, 'COLLIDE-1', 'Same tag', 'restricted')`;
    const [hidden] = await db.owner.client<{ id: string }[]>`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at, matter_id)
      values (${firm.organizationId}, ${teamMember.userId}, 'fact', 'stated',
              'Zanzibar escrow instructions behind the wall', 'attack', now() + interval '1 day',
              ${collided})
      returning id`;
    for (const matter of [null, matterId.open, collided]) {
      const rows = await asTenant(
        firm.member,
        (sql) => sql<{ id: string }[]>`
          select id from public.memory_fulltext_candidates(
            'zanzibar escrow', null, null, 100, 1000, ${matter}::uuid)`,
      );
      expect(rows.map((r) => r.id)).not.toContain(hidden?.id);
    }
  });

  it("the vector candidate function gives nothing behind a wall, even when handed its ids", async () => {
    const query = `{${(await hashing.embed(["zanzibar settlement"]))[0]?.join(",")}}`;
    for (const [tenant, matter, hidden] of [
      [firm.member, matterId.restricted, memory.restricted],
      [firm.manager, matterId.restricted, memory.restricted],
      [screened, matterId.open, memory.open],
    ] as const) {
      const [row] = await asTenant(
        tenant,
        (sql) => sql<{ ids: string[] | null }[]>`
          select public.memory_vector_candidates(
            ${query}::real[], 'embedder@256', null, null,
            ${`{${memory.restricted},${memory.open}}`}::uuid[], 100, 1000, ${matter}::uuid) as ids`,
      );
      expect(row?.ids ?? []).not.toContain(hidden);
    }
  });

  it("memories_withheld answers a number and nothing else", async () => {
    const fingerprint = await fingerprintOf(memory.restricted);
    const rows = await asTenant(
      firm.member,
      (sql) => sql`select * from public.memories_withheld(${fingerprint}, null)`,
    );
    expect(rows).toHaveLength(1);
    expect(Object.values(rows[0] ?? {})).toEqual([1]);
  });

  it("the maintenance functions that hand out bodies are not the app role's", async () => {
    for (const statement of [
      (sql: Sql) => sql`select * from public.memories_to_embed('x', 256)`,
      (sql: Sql) => sql`select * from public.purge_expired_memories()`,
      (sql: Sql) =>
        sql`select public.set_memory_embedding(${memory.restricted}::uuid, '{1}'::real[], 'x@1')`,
    ]) {
      expect(await outcomeOf(asTenant(firm.member, statement))).toEqual({ code: "42501" });
    }
  });

  it("every SECURITY DEFINER function the app role may run is one reviewed here, none returning a memory body", async () => {
    const rows = await db.app.client<{ name: string; result: string }[]>`
      select p.proname as name, pg_catalog.pg_get_function_result(p.oid) as result
      from pg_catalog.pg_proc p
      where p.prosecdef and has_function_privilege(current_user, p.oid, 'EXECUTE')
        and p.pronamespace = 'public'::regnamespace
      order by 1`;
    const memoryReaders = new Map([
      ["memory_fulltext_candidates", "TABLE(id uuid, rank real)"],
      ["memory_vector_candidates", "uuid[]"],
      ["memories_withheld", "integer"],
    ]);
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining([...memoryReaders.keys()]));
    for (const { name, result } of rows) {
      if (memoryReaders.has(name)) expect(result).toBe(memoryReaders.get(name));
      expect(result).not.toMatch(/\bbody\b/);
    }
  });

  it("an update cannot reach a hidden memory, move a memory between matters or out of one", async () => {
    const reached = await asTenant(
      firm.member,
      (sql) => sql<{ id: string }[]>`
        update memories set superseded_by = ${memory.firmWide}, superseded_at = now()
        where id = ${memory.restricted} returning id`,
    );
    expect(reached).toEqual([]);
    const moved = await outcomeOf(
      asTenant(
        teamMember,
        (sql) => sql`update memories set matter_id = null where id = ${memory.restricted}`,
      ),
    );
    expect(moved).toEqual({ code: "42501" });
    expect(await live(memory.restricted)).toEqual({ body: SECRET_R, superseded_by: null });
  });

  it("an app-role erasure that forgets the hold filter still cannot erase a held matter's memory", async () => {
    const kept = await remember(clients.member, {
      kind: "fact",
      origin: "stated",
      body: "Held evidence: the March invoices were backdated",
      matter: HELD,
    });
    const id = String(kept.structured?.memory_id);
    await outcomeOf(
      asTenant(
        firm.member,
        (sql) => sql`
          update memories set body = null, subject_id = null, embedding = null,
                              forgotten_at = now(), forgotten_by = ${firm.member.userId}
          where id = ${id}`,
      ),
    );
    expect((await live(id))?.body).toBe("Held evidence: the March invoices were backdated");
  });
});

describe("a legal hold", () => {
  it("keeps a held matter's expired memory recalled, out of the purge and out of every erasure, until release", async () => {
    const body = "Held: the witness list for the Lyon trial";
    const stored = await remember(clients.member, {
      kind: "observation",
      origin: "stated",
      body,
      subject_type: "person",
      subject_id: "Held Witness",
      matter: HELD,
    });
    const id = String(stored.structured?.memory_id);
    await db.owner
      .client`update memories set expires_at = now() - interval '1 day' where id = ${id}`;
    await db.maintenance.client`select * from public.purge_expired_memories()`;
    const recalled = await recall(clients.member, { query: "witness list", matter: HELD });
    expect(recalled.structured.block).toContain(body);
    for (const attempt of [
      () => forget(clients.member, { memory_id: id }),
      () => forget(clients.manager, { subject_type: "person", subject_id: "Held Witness" }),
    ]) {
      const answer = await attempt();
      expect(answer.structured).toMatchObject({ forgotten: 0, code: "NORTH_LEGAL_HOLD" });
    }
    expect((await live(id))?.body).toBe(body);
    await withOrganization(db.owner.db, firm.organizationId, (tx) =>
      releaseMatter(tx, { matterId: matterId.held }),
    );
    try {
      const after = await recall(clients.member, { query: "witness list", matter: HELD });
      expect(after.structured.block).not.toContain(body);
      await db.maintenance.client`select * from public.purge_expired_memories()`;
      expect((await live(id))?.body).toBeNull();
    } finally {
      await withOrganization(db.owner.db, firm.organizationId, (tx) =>
        holdMatter(tx, { matterId: matterId.held, reason: "Litigation hold" }),
      );
    }
  });
});

describe("a screen that lands between the matter check and the insert", () => {
  it("stores nothing, and the body reaches no log", async () => {
    const body = `Written while being screened ${randomUUID()}`;
    embedderControl.before = async () => {
      await withOrganization(db.owner.db, firm.organizationId, (tx) =>
        addScreen(tx, {
          organizationId: firm.organizationId,
          matterId: matterId.open,
          userId: firm.member.userId,
          reason: "Conflict found mid-call",
        }),
      );
    };
    try {
      // Refused, or failed as the insert policy's violation (an internal error): either way
      // nothing may be stored.
      const answer = await remember(clients.member, {
        kind: "fact",
        origin: "stated",
        body,
        matter: OPEN,
      }).catch((error: unknown) => ({ structured: { outcome: String(error) } }));
      expect(answer.structured?.outcome).not.toBe("created");
    } finally {
      embedderControl.before = undefined;
      await withOrganization(db.owner.db, firm.organizationId, (tx) =>
        removeScreen(tx, {
          organizationId: firm.organizationId,
          matterId: matterId.open,
          userId: firm.member.userId,
        }),
      );
    }
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from memories where body = ${body}`;
    expect(row?.n).toBe(0);
    expect(harness.logs.join("\n")).not.toContain(body);
  });
});

describe("the console, for a manager screened from a matter", () => {
  const { logger, logs } = capturingLogger();
  let admin: ReturnType<typeof buildAdminApp>;
  let cookie = "";
  let csrf = "";

  const get = (path: string) =>
    admin.request(`http://localhost/admin${path}`, { headers: { cookie } });
  const post = (path: string, form: Record<string, string>) =>
    admin.request(`http://localhost/admin${path}`, {
      method: "POST",
      headers: { cookie },
      body: new URLSearchParams({ ...form, csrf_token: csrf }),
    });

  beforeAll(async () => {
    admin = buildAdminApp({ db: db.app.db, auditKey: TEST_AUDIT_KEY, logger });
    const { token } = await createApiToken(db.owner.db, {
      organizationId: firm.organizationId,
      userId: firm.manager.userId,
      scopes: ["admin"],
      expiresAt: null,
    });
    const signedIn = await admin.request("http://localhost/admin/login", {
      method: "POST",
      body: new URLSearchParams({ token }),
    });
    expect(signedIn.status).toBe(303);
    cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const page = await (await get("/memories")).text();
    csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? "";
    expect(csrf).not.toBe("");
  });

  // (A subject searched for is echoed back in the search form: its name is not a secret here.)
  const secrets = [SECRET_R, SECRET_WALLED];

  it("the matter's page, in any case, shows none of its memories", async () => {
    for (const reference of [RESTRICTED, RESTRICTED.toLowerCase()]) {
      const page = await get(`/matters/${reference}`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toMatch(/screened/i);
      for (const secret of secrets) expect(html).not.toContain(secret);
    }
  });

  it("the memories pages, the review, the export and the member pages show none of them", async () => {
    const pages = [
      await get("/memories"),
      await get("/memories/export.json"),
      await get("/matters"),
      await get(`/members/${teamMember.userId}`),
      await post("/memories", WALLED),
      await post("/memories", SUBJECT),
      await post("/memories/without-subject", {}),
      await post("/memories/export.json", WALLED),
    ];
    for (const page of pages) {
      const text = await page.text();
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toContain(memory.restricted);
    }
  });

  it("confirm and forget by a hidden memory's id answer as for a missing one and erase nothing", async () => {
    const missing = await post("/memories/confirm", { target: "memory", memory_id: randomUUID() });
    const hidden = await post("/memories/confirm", {
      target: "memory",
      memory_id: memory.restricted,
    });
    expect(hidden.status).toBe(missing.status);
    expect(await hidden.text()).not.toContain(SECRET_R);
    const erase = await post("/memories/forget", {
      target: "memory",
      memory_id: memory.restricted,
    });
    const eraseMissing = await post("/memories/forget", {
      target: "memory",
      memory_id: randomUUID(),
    });
    expect(erase.status).toBe(eraseMissing.status);
    await post("/memories/forget", { target: "subject", ...WALLED });
    expect((await live(memory.restricted))?.body).toBe(SECRET_R);
    expect((await live(memory.walled))?.body).toBe(SECRET_WALLED);
    expect(logs.join("\n")).not.toContain(SECRET_R);
  });

  it("a subject review does not tell a screened manager nothing is held when memories are withheld", async () => {
    const html = await (await post("/memories", WALLED)).text();
    expect(html).not.toMatch(/Nothing is held about/);
  });
});

describe("logs and the audit ledger", () => {
  it("carry no body and no matter reference in clear", async () => {
    const logs = harness.logs.join("\n").toLowerCase();
    const audit = (
      await db.owner.client<
        { row: string }[]
      >`select row_to_json(a)::text as row from audit_events a`
    )
      .map((r) => r.row)
      .join("\n")
      .toLowerCase();
    for (const text of [logs, audit]) {
      for (const secret of [SECRET_R, SECRET_O, SECRET_WALLED, "zanzibar", "quokka"]) {
        expect(text).not.toContain(secret.toLowerCase());
      }
      expect(text).not.toContain(RESTRICTED.toLowerCase());
      expect(text).not.toContain("paula walled");
    }
  });
});
