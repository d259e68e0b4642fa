import { readFile } from "node:fs/promises";
import {
  addScreen,
  addToTeam,
  createMatter,
  findMatter,
  holdMatter,
  listMatters,
  MATTER_ACCESS,
  type MatterAccess,
  type MatterRow,
  type MembershipChange,
  matterDetail,
  matterFieldProblem,
  membersByEmail,
  normalizeEmail,
  organizationExists,
  recordAudit,
  releaseMatter,
  removeFromTeam,
  removeScreen,
  replaceScreens,
  replaceTeam,
  type Tx,
  updateMatter,
  withOrganization,
} from "@north/db";
import { z } from "zod";
import type { NorthConfig } from "./config.ts";
import { operatorTarget, requireUuid, translate } from "./operator.ts";
import { CliError, type OwnerRuntime, openOwner } from "./runtime.ts";

/**
 * `north matter …` (SPEC §5a): matters, their teams and screens, legal holds, and the import of
 * a conflicts system's export. Each command checks its arguments before it opens the database,
 * writes in one transaction with its audit row (the matter and the member as fingerprints), and
 * refuses with one line and nothing changed.
 */

export interface MatterFlags {
  org?: string;
  ref?: string;
  name?: string;
  client?: string;
  restricted?: boolean;
  user?: string;
  reason?: string;
  file?: string;
}

const iso = (d: Date | string) => new Date(d).toISOString();

const NO_MATTER = "no matter has that reference in that organization; nothing was changed";
const DUPLICATE =
  "a matter with that reference already exists in that organization (references are compared without case); nothing was changed";

/** Refuses a field SPEC §5a bounds, with one line naming it, before anything is opened. */
function check(field: "reference" | "name" | "client" | "reason", value: string | undefined) {
  const problem = matterFieldProblem(field, value);
  if (problem) throw new CliError(`${problem}; nothing was changed`);
}

function requireRef(flags: MatterFlags): string {
  if (flags.ref === undefined || flags.ref === "") throw new CliError("--ref is required");
  check("reference", flags.ref);
  return flags.ref;
}

/** Opens the owner connection on an organization that exists, and runs `work` in it. */
async function inOrganization<T>(
  config: NorthConfig,
  organizationId: string,
  work: (tx: Tx, runtime: OwnerRuntime) => Promise<T>,
): Promise<T> {
  const runtime = await openOwner(config);
  try {
    if (!(await organizationExists(runtime.owner.db, organizationId))) {
      throw new CliError("no organization has that id");
    }
    return await withOrganization(runtime.owner.db, organizationId, (tx) => work(tx, runtime));
  } catch (error) {
    throw translate(error, { "23505": DUPLICATE });
  } finally {
    await runtime.close();
  }
}

async function requireMatter(tx: Tx, organizationId: string, reference: string) {
  const matter = await findMatter(tx, { organizationId, reference });
  if (!matter) throw new CliError(NO_MATTER);
  return matter;
}

const matterOutput = (m: MatterRow) => ({
  id: m.id,
  reference: m.reference,
  name: m.name,
  client: m.client,
  access: m.access,
  hold: m.hold ? { reason: m.hold.reason, since: iso(m.hold.since) } : null,
});

export async function matterCreate(config: NorthConfig, flags: MatterFlags) {
  const organizationId = requireUuid(flags.org, "--org");
  const reference = requireRef(flags);
  if (flags.name === undefined) throw new CliError("--name is required");
  check("name", flags.name);
  if (flags.client !== undefined) check("client", flags.client);
  const access: MatterAccess = flags.restricted ? "restricted" : "open";
  return inOrganization(config, organizationId, async (tx, runtime) => {
    const matter = await createMatter(tx, {
      organizationId,
      reference,
      name: flags.name as string,
      client: flags.client,
      access,
    });
    await recordAudit(tx, {
      tool: "matter_create",
      outcome: "created",
      target: operatorTarget(config, runtime)(`matter:${reference.toLowerCase()}`),
    });
    return matterOutput(matter);
  });
}

export async function matterList(config: NorthConfig, flags: MatterFlags) {
  const organizationId = requireUuid(flags.org, "--org");
  return inOrganization(config, organizationId, async (tx) => ({
    matters: (await listMatters(tx, { organizationId })).map((m) => ({
      ...matterOutput(m),
      team: m.teamSize,
      screens: m.screens,
      memories: m.memories,
    })),
  }));
}

export async function matterShow(config: NorthConfig, flags: MatterFlags) {
  const organizationId = requireUuid(flags.org, "--org");
  const reference = requireRef(flags);
  return inOrganization(config, organizationId, async (tx) => {
    const detail = await matterDetail(tx, { organizationId, reference });
    if (!detail) throw new CliError(NO_MATTER);
    return {
      reference: detail.reference,
      name: detail.name,
      client: detail.client,
      access: detail.access,
      team: detail.team.map((t) => ({ user_id: t.userId, email: t.email })),
      screens: detail.screens.map((s) => ({ user_id: s.userId, email: s.email, reason: s.reason })),
      hold: detail.hold ? { reason: detail.hold.reason, since: iso(detail.hold.since) } : null,
      memories: detail.memories,
    };
  });
}

const MEMBERSHIP_PROBLEMS: Record<Exclude<MembershipChange, { ok: true }>["problem"], string> = {
  not_member: "that user is not a member of that organization; nothing was changed",
  not_on_team: "that user is not on that matter's team; nothing was changed",
  not_screened: "that user is not screened from that matter; nothing was changed",
};

type MembershipCommand = "team add" | "team remove" | "screen add" | "screen remove";

/** `matter team add|remove` and `matter screen add|remove`: one member, one matter. */
export async function matterMembership(
  config: NorthConfig,
  command: MembershipCommand,
  flags: MatterFlags,
) {
  const organizationId = requireUuid(flags.org, "--org");
  const reference = requireRef(flags);
  const userId = requireUuid(flags.user, "--user");
  if (command === "screen add") {
    if (flags.reason === undefined) throw new CliError("--reason is required");
    check("reason", flags.reason);
  }
  return inOrganization(config, organizationId, async (tx, runtime) => {
    const matter = await requireMatter(tx, organizationId, reference);
    const params = { organizationId, matterId: matter.id, userId };
    const result =
      command === "team add"
        ? await addToTeam(tx, params)
        : command === "team remove"
          ? await removeFromTeam(tx, params)
          : command === "screen add"
            ? await addScreen(tx, { ...params, reason: flags.reason as string })
            : await removeScreen(tx, params);
    if (!result.ok) throw new CliError(MEMBERSHIP_PROBLEMS[result.problem]);
    const [area, change] = command.split(" ") as ["team" | "screen", "add" | "remove"];
    await recordAudit(tx, {
      tool: `matter_${area}`,
      outcome: result.changed ? "updated" : "noop",
      target: operatorTarget(config, runtime)(userId),
      reason: change === "add" ? "added" : "removed",
    });
    return { reference: matter.reference, user_id: userId, changed: result.changed };
  });
}

export async function matterHold(config: NorthConfig, flags: MatterFlags) {
  const organizationId = requireUuid(flags.org, "--org");
  const reference = requireRef(flags);
  if (flags.reason === undefined) throw new CliError("--reason is required");
  check("reason", flags.reason);
  return inOrganization(config, organizationId, async (tx, runtime) => {
    const matter = await requireMatter(tx, organizationId, reference);
    const { since } = await holdMatter(tx, { matterId: matter.id, reason: flags.reason as string });
    await recordAudit(tx, {
      tool: "matter_hold",
      outcome: matter.hold ? "updated" : "created",
      target: operatorTarget(config, runtime)(`matter:${matter.reference.toLowerCase()}`),
      reason: "held",
    });
    return {
      reference: matter.reference,
      hold: { reason: flags.reason?.trim(), since: iso(since) },
    };
  });
}

export async function matterRelease(config: NorthConfig, flags: MatterFlags) {
  const organizationId = requireUuid(flags.org, "--org");
  const reference = requireRef(flags);
  return inOrganization(config, organizationId, async (tx, runtime) => {
    const matter = await requireMatter(tx, organizationId, reference);
    const released = await releaseMatter(tx, { matterId: matter.id });
    await recordAudit(tx, {
      tool: "matter_hold",
      outcome: released ? "updated" : "noop",
      target: operatorTarget(config, runtime)(`matter:${matter.reference.toLowerCase()}`),
      reason: "released",
    });
    return { reference: matter.reference, released };
  });
}

/** A conflicts system's export, as SPEC §5a shapes it. */
const importSchema = z.object({
  matters: z.array(
    z.object({
      reference: z.string(),
      name: z.string(),
      client: z.string().optional(),
      access: z.enum(MATTER_ACCESS),
      team: z.array(z.string()).default([]),
      screened: z.array(z.object({ email: z.string(), reason: z.string() })).default([]),
    }),
  ),
});
type ImportDocument = z.output<typeof importSchema>;

async function readImport(file: string | undefined): Promise<ImportDocument> {
  if (file === undefined || file === "") throw new CliError("--file is required");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new CliError("--file cannot be read; nothing was imported");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError("--file is not JSON; nothing was imported");
  }
  const parsed = importSchema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues[0]?.path.join(".") ?? "";
    throw new CliError(
      `--file does not have the import's shape (at ${where}); nothing was imported`,
    );
  }
  const seen = new Set<string>();
  parsed.data.matters.forEach((m, index) => {
    type Field = Parameters<typeof matterFieldProblem>[0];
    const fields: [Field, string][] = [
      ["reference", m.reference],
      ["name", m.name],
      ...(m.client === undefined ? [] : [["client", m.client] as [Field, string]]),
      ...m.screened.map((s): [Field, string] => ["reason", s.reason]),
    ];
    for (const [field, value] of fields) {
      const problem = matterFieldProblem(field, value);
      if (problem) throw new CliError(`matters[${index}]: ${problem}; nothing was imported`);
    }
    const key = m.reference.toLowerCase();
    if (seen.has(key)) {
      throw new CliError(`matters[${index}]: its reference appears twice; nothing was imported`);
    }
    seen.add(key);
  });
  return parsed.data;
}

/**
 * `matter import`: the file states each matter as the conflicts system has it — name, client,
 * access, the whole team and every screen — and the import makes North say the same, all or
 * nothing, in one transaction. Members are named by email; any email that is not an active
 * member's refuses the whole import, naming them. Run twice, the second changes nothing.
 */
export async function matterImport(config: NorthConfig, flags: MatterFlags) {
  const organizationId = requireUuid(flags.org, "--org");
  const document = await readImport(flags.file);
  return inOrganization(config, organizationId, async (tx, runtime) => {
    const emails = document.matters.flatMap((m) => [...m.team, ...m.screened.map((s) => s.email)]);
    const { found, unknown } = await membersByEmail(tx, { organizationId, emails });
    if (unknown.length > 0) {
      throw new CliError(
        `not members of that organization: ${unknown.join(", ")}; nothing was imported`,
      );
    }
    const userOf = (email: string) => found.get(normalizeEmail(email)) ?? "";
    const counts = { created: 0, updated: 0, unchanged: 0 };
    for (const entry of document.matters) {
      const existing = await findMatter(tx, { organizationId, reference: entry.reference });
      const matter =
        existing ??
        (await createMatter(tx, {
          organizationId,
          reference: entry.reference,
          name: entry.name,
          client: entry.client,
          access: entry.access,
        }));
      const described =
        existing !== undefined &&
        (await updateMatter(tx, {
          matterId: matter.id,
          name: entry.name,
          client: entry.client,
          access: entry.access,
        }));
      const params = { organizationId, matterId: matter.id };
      const team = await replaceTeam(tx, { ...params, userIds: entry.team.map(userOf) });
      const screens = await replaceScreens(tx, {
        ...params,
        screens: entry.screened.map((s) => ({ userId: userOf(s.email), reason: s.reason })),
      });
      if (!existing) counts.created++;
      else if (described || team > 0 || screens > 0) counts.updated++;
      else counts.unchanged++;
    }
    await recordAudit(tx, {
      tool: "matter_import",
      outcome: counts.created + counts.updated > 0 ? "updated" : "noop",
      affected: counts.created + counts.updated,
      target: operatorTarget(config, runtime)(`import:${organizationId}`),
    });
    return { matters: document.matters.length, ...counts };
  });
}
