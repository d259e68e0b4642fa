import {
  addMember,
  createOrganization,
  listMembers,
  listOrganizations,
  MEMBER_ROLES,
  type MemberChange,
  type MemberRole,
  ORGANIZATION_LANGUAGES,
  type OrganizationLanguage,
  organizationExists,
  recordAudit,
  removeMember,
  setMemberRole,
  setOrganizationLanguage,
  type Tx,
  withOrganization,
} from "@north/db";
import type { NorthConfig } from "./config.ts";
import { operatorTarget, requireUuid, translate } from "./operator.ts";
import { CliError, openOwner } from "./runtime.ts";

/** Operator commands for organizations and memberships (SPEC §2). */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export async function orgCreate(config: NorthConfig, name: string | undefined) {
  const trimmed = name?.trim();
  if (!trimmed || trimmed.length > 200)
    throw new CliError("org create needs a NAME of 1–200 characters");
  const runtime = await openOwner(config);
  try {
    const org = await createOrganization(runtime.owner.db, { name: trimmed });
    return { id: org.id };
  } finally {
    await runtime.close();
  }
}

export async function orgList(config: NorthConfig) {
  const runtime = await openOwner(config);
  try {
    const organizations = await listOrganizations(runtime.owner.db);
    return {
      organizations: organizations.map((o) => ({ ...o, createdAt: iso(o.createdAt) })),
    };
  } finally {
    await runtime.close();
  }
}

const LANGUAGE_NAMES: Record<OrganizationLanguage, string> = { en: "English", fr: "French" };
const LANGUAGE_CHOICES = ORGANIZATION_LANGUAGES.map((l) => `${l} (${LANGUAGE_NAMES[l]})`).join(
  " or ",
);

/**
 * Sets the organisation's language: full-text recall stems and folds in it (decision 018). Its
 * memories written under another language are re-stemmed in the same transaction, audited as
 * `org_set` with the language as reason and the memories re-stemmed as affected rows.
 */
export async function orgSet(config: NorthConfig, flags: { org?: string; language?: string }) {
  const organizationId = requireUuid(flags.org, "--org");
  if (flags.language === undefined) {
    throw new CliError(`--language is required: ${LANGUAGE_CHOICES}`);
  }
  if (!(ORGANIZATION_LANGUAGES as readonly string[]).includes(flags.language)) {
    throw new CliError(`--language must be ${LANGUAGE_CHOICES}; nothing was changed`);
  }
  const language = flags.language as OrganizationLanguage;
  const runtime = await openOwner(config);
  try {
    const result = await withOrganization(runtime.owner.db, organizationId, async (tx) => {
      const set = await setOrganizationLanguage(tx, { organizationId, language });
      if (set) {
        const changed = set.previous !== language || set.memoriesRestemmed > 0;
        await recordAudit(tx, {
          tool: "org_set",
          outcome: changed ? "updated" : "noop",
          reason: language,
          affected: set.memoriesRestemmed,
        });
      }
      return set;
    });
    if (!result) throw new CliError("no such organization");
    return {
      id: organizationId,
      language,
      previous: result.previous,
      memoriesRestemmed: result.memoriesRestemmed,
    };
  } finally {
    await runtime.close();
  }
}

export async function memberAdd(
  config: NorthConfig,
  flags: { org?: string; email?: string; manager?: boolean },
) {
  const organizationId = requireUuid(flags.org, "--org");
  if (flags.email === undefined) throw new CliError("--email is required");
  const email = flags.email.trim();
  if (!EMAIL.test(email) || email.length > 320)
    throw new CliError("--email must be an email address");
  const runtime = await openOwner(config);
  try {
    const target = operatorTarget(config, runtime);
    const member = await withOrganization(runtime.owner.db, organizationId, async (tx) => {
      const added = await addMember(tx, {
        organizationId,
        email,
        role: flags.manager ? "manager" : "member",
      });
      await recordAudit(tx, {
        tool: "member_add",
        outcome: "created",
        reason: added.reinstated ? "reinstated" : undefined,
        target: target(added.userId),
      });
      return added;
    }).catch((error: unknown) => {
      throw translate(error, {
        "23503": "no such organization",
        "23505": "that email is already a member",
      });
    });
    return {
      userId: member.userId,
      organizationId: member.organizationId,
      role: member.role,
      reinstated: member.reinstated,
    };
  } finally {
    await runtime.close();
  }
}

/** Every member, removed ones included, with role and dates. */
export async function memberList(config: NorthConfig, flags: { org?: string }) {
  const organizationId = requireUuid(flags.org, "--org");
  const runtime = await openOwner(config);
  try {
    if (!(await organizationExists(runtime.owner.db, organizationId))) {
      throw new CliError("no such organization");
    }
    const members = await listMembers(runtime.owner.db, { organizationId });
    return {
      members: members.map((m) => ({
        ...m,
        createdAt: iso(m.createdAt),
        removedAt: iso(m.removedAt),
      })),
    };
  } finally {
    await runtime.close();
  }
}

/**
 * Applies a change to an active member and, when there was one, its audit row (`tool`, with the
 * member fingerprinted and the revoked tokens counted) in the same transaction.
 */
async function changeMember(
  config: NorthConfig,
  flags: { org?: string; user?: string },
  audit: { tool: "member_remove" | "member_role"; outcome: "revoked" | "updated"; reason: string },
  change: (tx: Tx, key: { organizationId: string; userId: string }) => Promise<MemberChange>,
) {
  const organizationId = requireUuid(flags.org, "--org");
  const userId = requireUuid(flags.user, "--user");
  const runtime = await openOwner(config);
  try {
    const target = operatorTarget(config, runtime);
    const result = await withOrganization(runtime.owner.db, organizationId, async (tx) => {
      const changed = await change(tx, { organizationId, userId });
      if (changed.found) {
        await recordAudit(tx, {
          ...audit,
          target: target(userId),
          affected: changed.tokensRevoked,
        });
      }
      return changed;
    });
    if (!result.found) throw new CliError("no active member with that --user in that --org");
    return {
      userId,
      organizationId,
      email: result.email,
      role: result.role,
      tokensRevoked: result.tokensRevoked,
    };
  } finally {
    await runtime.close();
  }
}

/** Removes a member and revokes every token they hold: their next request fails. */
export async function memberRemove(config: NorthConfig, flags: { org?: string; user?: string }) {
  const audit = { tool: "member_remove", outcome: "revoked", reason: "operator" } as const;
  const result = await changeMember(config, flags, audit, removeMember);
  return { ...result, removed: true };
}

/** Changes a member's role; demoting a manager revokes their admin tokens. */
export async function memberRole(
  config: NorthConfig,
  flags: { org?: string; user?: string; role?: string },
) {
  if (flags.role === undefined) throw new CliError("--role is required (member or manager)");
  if (!(MEMBER_ROLES as readonly string[]).includes(flags.role)) {
    throw new CliError(`--role must be one of ${MEMBER_ROLES.join(", ")}`);
  }
  const role = flags.role as MemberRole;
  const audit = { tool: "member_role", outcome: "updated", reason: role } as const;
  return changeMember(config, flags, audit, (tx, key) => setMemberRole(tx, { ...key, role }));
}
