import { setOrganizationLanguage, withOrganization } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestDatabase,
  installFresh,
  migrateBefore,
  type TestDatabase,
} from "./support/database.ts";
import { createWorkspace, createWorkspaceOnOldSchema, type Workspace } from "./support/fixtures.ts";
import { createTestApp, type TestApp, useTestApp } from "./support/mcp.ts";
import { recall, remember } from "./support/memory-tools.ts";
import { north, northJson } from "./support/processes.ts";

/**
 * Full-text recall in the organisation's language (SPEC §5, decision 018), through the recall
 * tool on real PostgreSQL; the language set with `north org set`.
 */

const { db, harness } = useTestApp();

async function workspaceIn(language: "en" | "fr"): Promise<Workspace> {
  const ws = await createWorkspace(db.owner.db, `Cabinet ${language}`);
  if (language !== "en") {
    await withOrganization(db.owner.db, ws.organizationId, (tx) =>
      setOrganizationLanguage(tx, { organizationId: ws.organizationId, language }),
    );
  }
  return ws;
}

/** A client of the workspace's member holding these memories, and a function that recalls. */
async function holding(ws: Workspace, bodies: string[]) {
  const client = await harness.connect(ws.member);
  const ids: string[] = [];
  for (const body of bodies) {
    const stored = await remember(client, { kind: "fact", body, origin: "stated" });
    expect(stored.structured).toMatchObject({ outcome: "created" });
    ids.push(stored.structured?.memory_id as string);
  }
  const found = async (query: string) => {
    const result = await recall(client, { query });
    expect(result.structured.mode).toBe("fulltext");
    return result.structured.memories.map((m) => ids.indexOf(m.memory_id));
  };
  return found;
}

describe("full-text recall in a French organisation", () => {
  it("finds « contrat » by « contrats » and « résilié » by « resilie »", async () => {
    const found = await holding(await workspaceIn("fr"), [
      "Le contrat de bail de la boulangerie Martin a été résilié le 3 mars.",
      "Les honoraires du dossier Petit sont facturés au forfait.",
    ]);
    expect(await found("contrats")).toEqual([0]);
    expect(await found("resilie")).toEqual([0]);
    expect(await found("résiliation du contrat")).toEqual([0]);
    expect(await found("honoraire forfaitaire")).toEqual([1]);
  });

  it("matches a feminine participle and its noun, typed with or without accents", async () => {
    const found = await holding(await workspaceIn("fr"), [
      "La convention de partenariat avec la société Vidal a été résiliée le 9 juin.",
      "Mme Lefèvre a été licenciée pour faute grave.",
    ]);
    expect(await found("résilié")).toEqual([0]);
    expect(await found("resiliation")).toEqual([0]);
    expect(await found("licenciement")).toEqual([1]);
    expect(await found("lefevre licenciee")).toEqual([1]);
  });
});

describe("full-text recall in an English organisation", () => {
  it("stems English: « employee dismissal » finds « The employees were dismissed »", async () => {
    const found = await holding(await workspaceIn("en"), [
      "The employees were dismissed after the site closed.",
      "Hearings in Leeds start at ten.",
    ]);
    expect(await found("employee dismissal")).toEqual([0]);
    expect(await found("dismissing")).toEqual([0]);
    expect(await found("hearing")).toEqual([1]);
  });

  it("does not stem French there: the same body is found by « licenciement » only in French", async () => {
    const body = "Les salariées ont été licenciées.";
    const english = await holding(await workspaceIn("en"), [body]);
    const french = await holding(await workspaceIn("fr"), [body]);
    expect(await english("licenciement")).toEqual([]);
    expect(await french("licenciement")).toEqual([0]);
    // And the other way: English stemming belongs to the English organisation.
    const englishBody = "The employees were dismissed.";
    expect(await (await holding(await workspaceIn("en"), [englishBody]))("dismissing")).toEqual([
      0,
    ]);
    expect(await (await holding(await workspaceIn("fr"), [englishBody]))("dismissing")).toEqual([]);
  });
});

describe("accent folding", () => {
  it.each([
    ["fr", "Le delai de preavis est de trois mois.", "délai préavis"],
    ["fr", "L'échéance du bail tombe le 30 septembre.", "echeance bail"],
    ["en", "Café Lumière Ltd renews its franchise in May.", "cafe lumiere"],
    ["en", "Zoe Martin signs for the landlord.", "Zoë"],
  ] as const)("in %s, finds %j by %j", async (language, body, query) => {
    const found = await holding(await workspaceIn(language), [body, "Something else entirely."]);
    expect(await found(query)).toEqual([0]);
  });
});

describe("ranking", () => {
  it("puts memories with every word first, then fills the places left with those with some", async () => {
    const found = await holding(await workspaceIn("fr"), [
      "Le greffe de Nanterre ferme à 16 h.",
      "Le délai d'appel est d'un mois.",
      "Le délai d'appel contre un jugement de Nanterre est d'un mois.",
    ]);
    const ranked = await found("délai appel Nanterre");
    expect(ranked[0]).toBe(2);
    expect([...ranked].sort()).toEqual([0, 1, 2]);
  });
});

describe("north org set", () => {
  let env: Record<string, string>;
  beforeAll(() => {
    env = { DATABASE_URL: db.ownerUrl };
  });

  it("refuses --language xx in one line listing the languages, and changes nothing", async () => {
    const ws = await workspaceIn("en");
    const result = await north(["org", "set", "--org", ws.organizationId, "--language", "xx"], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/--language must be en \(English\) or fr \(French\)/);
    expect(result.stderr).toMatch(/nothing was changed/);
    const [org] = await db.owner.client`
      select language from organizations where id = ${ws.organizationId}`;
    expect(org?.language).toBe("en");
    const [audit] = await db.owner.client`
      select count(*)::int as n from audit_events
      where organization_id = ${ws.organizationId} and tool = 'org_set'`;
    expect(audit?.n).toBe(0);
  });

  it.each([
    [["org", "set", "--language", "fr"], /--org is required/],
    [["org", "set", "--org", "00000000-0000-0000-0000-000000000000"], /--language is required/],
    [
      ["org", "set", "--org", "00000000-0000-0000-0000-000000000000", "--language", "fr"],
      /no such organization/,
    ],
    [["org", "set", "--org", "x", "--language", "fr", "--email", "a@b.c"], /does not take --email/],
  ])("refuses %j in one line", async (args, message) => {
    const result = await north(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });

  it("sets the language, re-stems the memories written before, audits it, and org list shows it", async () => {
    const ws = await workspaceIn("en");
    const found = await holding(ws, ["Les salariées ont été licenciées."]);
    expect(await found("licenciement")).toEqual([]);

    const set = await northJson(
      ["org", "set", "--org", ws.organizationId, "--language", "fr"],
      env,
    );
    expect(set).toEqual({
      id: ws.organizationId,
      language: "fr",
      previous: "en",
      memoriesRestemmed: 1,
    });
    expect(await found("licenciement")).toEqual([0]);
    await holding(ws, ["La rupture conventionnelle a été signée."]);
    const languages = await db.owner.client`
      select language from memories where organization_id = ${ws.organizationId}`;
    expect(languages.map((m) => m.language)).toEqual(["fr", "fr"]);

    const again = await northJson(
      ["org", "set", "--org", ws.organizationId, "--language", "fr"],
      env,
    );
    expect(again).toMatchObject({ previous: "fr", memoriesRestemmed: 0 });

    const audit = await db.owner.client`
      select outcome, reason, affected from audit_events
      where organization_id = ${ws.organizationId} and tool = 'org_set' order by occurred_at`;
    expect(audit.map((a) => ({ ...a }))).toEqual([
      { outcome: "updated", reason: "fr", affected: 1 },
      { outcome: "noop", reason: "fr", affected: 0 },
    ]);

    const list = await northJson<{ organizations: { id: string; language: string }[] }>(
      ["org", "list"],
      env,
    );
    expect(list.organizations.find((o) => o.id === ws.organizationId)?.language).toBe("fr");
    expect(list.organizations.every((o) => o.language === "en" || o.language === "fr")).toBe(true);
  });
});

describe("upgrading from the release before language-aware search (0010–0012)", () => {
  let old: TestDatabase;
  let app: TestApp;
  let ws: Workspace;

  beforeAll(async () => {
    old = await createTestDatabase({ from: "empty" });
    await migrateBefore(old, "language_search_functions");
    ws = await createWorkspaceOnOldSchema(old.owner.client);
    for (const body of [
      "The employees' contracts were terminated in March.",
      "Les salariées ont été licenciées et leurs dépôts restitués.",
    ]) {
      await old.owner.client`
        insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
        values (${ws.organizationId}, ${ws.member.userId}, 'fact', 'stated', ${body}, 'old-run',
                now() + interval '30 days')`;
    }
    await installFresh(old);
    app = createTestApp({ db: old });
  });
  afterAll(async () => {
    await app.close();
    await old.drop();
  });

  const found = async (query: string) => {
    const { structured } = await recall(await app.connect(ws.member), { query });
    return structured.block;
  };

  it("re-indexes the memories already held, in English, with the index kept", async () => {
    expect(await found("employee contract termination")).toContain("contracts were terminated");
    expect(await found("depot")).toContain("dépôts restitués");
    expect(await found("licenciement")).not.toContain("licenciées");
    const [index] = await old.owner.client`
      select indexdef from pg_indexes
      where tablename = 'memories' and indexname = 'memories_tenant_search'`;
    expect(index?.indexdef).toMatch(/USING gin \(search\)/);
    const [held] = await old.owner.client`
      select count(*)::int as n from memories where language = 'en' and search <> ''::tsvector`;
    expect(held?.n).toBe(2);
  });

  it("re-stems them in French when the organisation becomes French", async () => {
    await withOrganization(old.owner.db, ws.organizationId, (tx) =>
      setOrganizationLanguage(tx, { organizationId: ws.organizationId, language: "fr" }),
    );
    expect(await found("licenciement")).toContain("licenciées");
  });
});
