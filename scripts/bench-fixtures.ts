/**
 * The people and data `bun run bench` (scripts/bench.ts) measures with, in one organisation per
 * workload where the tenant gate would otherwise be what is measured: lawyers per workload, the
 * denial-of-service attackers and victims, 100,000 memories, ten profile answers per reader, and
 * a real API token for everyone (the production resolver looks each up once, then proves it in
 * each call's transaction; decision 036).
 */
import {
  addMember,
  createApiToken,
  createOrganization,
  type DatabaseHandle,
  hashToken,
} from "@north/db";
import { benchNumber } from "./bench-settings.ts";

/** The denial-of-service scenario's attackers (docs/benchmarks.md). */
export const ATTACKERS = 12;

export async function seedBench(owner: DatabaseHandle, clients: number) {
  const org = await createOrganization(owner.db, { name: "Bench" });
  // Separate lawyers for each workload, so reads see a fixed ten-entry profile however many
  // rows the save phase wrote. The save and read lawyers each belong to a firm of their own
  // (BENCH_ONE_FIRM=1: all to one): the tenant gate lets one firm run three transactions at once
  // on a replica (decision 016), so eight lawyers of one firm would measure that fairness limit,
  // not North's cost, against pgbench's eight connections (docs/benchmarks.md).
  const ownFirms = process.env.BENCH_ONE_FIRM !== "1";
  const lawyers = async (workload: string, firms: "own" | "shared" = "shared") => {
    const created = [];
    for (let i = 0; i < clients; i++) {
      const firm =
        firms === "own"
          ? await createOrganization(owner.db, { name: `${workload} firm ${i}` })
          : org;
      created.push(
        await addMember(owner.db, {
          organizationId: firm.id,
          email: `${workload}${i}@example.test`,
        }),
      );
    }
    return created;
  };
  const cohorts = {
    save: await lawyers("save", ownFirms ? "own" : "shared"),
    read: await lawyers("read", ownFirms ? "own" : "shared"),
    recall: await lawyers("recall"),
    oauth: await lawyers("oauth"),
    attack: [] as Awaited<ReturnType<typeof lawyers>>,
    victim: [] as Awaited<ReturnType<typeof lawyers>>,
  };
  // The denial-of-service scenario (docs/benchmarks.md): 12 attackers in this organization, two
  // readers in another one.
  for (let i = 0; i < ATTACKERS; i++) {
    cohorts.attack.push(
      await addMember(owner.db, { organizationId: org.id, email: `attack${i}@example.test` }),
    );
  }
  const otherOrg = await createOrganization(owner.db, { name: "Bench victim" });
  for (let i = 0; i < 2; i++) {
    cohorts.victim.push(
      await addMember(owner.db, { organizationId: otherOrg.id, email: `victim${i}@example.test` }),
    );
  }
  // 100,000 memories in the organization, each naming two of fifty terms.
  const MEMORIES = benchNumber("BENCH_MEMORIES", 100_000, { min: 1, integer: true });
  await owner.client`
    insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
    select ${org.id}, ${cohorts.recall[0]?.userId ?? ""}, 'fact', 'stated',
           'Memory ' || g || ' about term' || (g % 50) || ' and term' || ((g * 7) % 50) || ' for matter ' || (g % 1000),
           'bench', now() + interval '90 days'
    from generate_series(1, ${MEMORIES}) g`;
  await owner.client`analyze memories`;
  for (const m of [...cohorts.read, ...cohorts.oauth, ...cohorts.victim]) {
    await owner.client`
      insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
      select ${m.organizationId}, ${m.userId}, 'seed-' || g, 'Seed question ' || g || '?', repeat('answer ', 20)
      from generate_series(1, 10) g`;
  }
  // The oauth workload's members sign in with real API tokens (and through OAuth with them).
  const apiTokens: string[] = [];
  for (const m of cohorts.oauth) {
    const created = await createApiToken(owner.db, {
      organizationId: m.organizationId,
      userId: m.userId,
      scopes: ["profile:write", "memory:read", "memory:write"],
      expiresAt: null,
    });
    apiTokens.push(created.token);
  }
  // The scale workload's own organisation (scripts/bench-scale.ts), signed in with API tokens.
  const scaleOrg = await createOrganization(owner.db, { name: "Bench scale" });
  const scaleLawyers = [];
  const scaleTokens: string[] = [];
  const scaleTokenIds: string[] = [];
  const scaleScopes: string[][] = [];
  for (let i = 0; i < clients; i++) {
    const m = await addMember(owner.db, {
      organizationId: scaleOrg.id,
      email: `scale${i}@example.test`,
    });
    scaleLawyers.push(m);
    const created = await createApiToken(owner.db, {
      organizationId: m.organizationId,
      userId: m.userId,
      scopes: ["memory:read", "memory:write"],
      expiresAt: null,
    });
    scaleTokens.push(created.token);
    scaleTokenIds.push(created.id);
    scaleScopes.push(created.scopes);
  }

  // Every lawyer calls with a real API token through the production resolver
  // (createAuthResolver): looked up once, then remembered and proven in each call's transaction.
  const credentials = new Map<
    string,
    { token: string; hash: string; id: string; scopes: string[] }
  >();
  for (const m of [
    ...cohorts.save,
    ...cohorts.read,
    ...cohorts.recall,
    ...cohorts.attack,
    ...cohorts.victim,
  ]) {
    const created = await createApiToken(owner.db, {
      organizationId: m.organizationId,
      userId: m.userId,
      scopes: ["profile:write", "memory:read"],
      expiresAt: null,
    });
    credentials.set(m.userId, {
      token: created.token,
      hash: hashToken(created.token),
      id: created.id,
      scopes: created.scopes,
    });
  }
  return {
    org,
    cohorts,
    apiTokens,
    scale: {
      org: scaleOrg,
      lawyers: scaleLawyers,
      tokens: scaleTokens,
      tokenIds: scaleTokenIds,
      scopes: scaleScopes,
    },
    credentials,
  };
}
