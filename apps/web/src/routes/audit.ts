import {
  AUDIT_OUTCOMES,
  type AuditCursor,
  type AuditFilters,
  listMembers,
  readAuditPageForAdmin,
} from "@north/db";
import type { ConsoleApp, ConsoleContext } from "../context.ts";
import { type AuditFilterValues, type AuditView, auditPage } from "../pages/audit.ts";
import { refusedPage } from "../pages/login.ts";

/** Rows per page of the ledger. */
export const AUDIT_PAGE_SIZE = 50;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOOL = /^[a-z][a-z0-9_]{0,63}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)_([0-9a-f-]{36})$/;
const DAY_MS = 86_400_000;

type ParsedQuery =
  | {
      ok: true;
      values: AuditFilterValues;
      filters: AuditFilters;
      before?: AuditCursor;
      after?: AuditCursor;
    }
  | { ok: false; values: AuditFilterValues; error: string };

/** A `YYYY-MM-DD` that names a real day, as midnight UTC. */
function day(value: string): Date | undefined {
  if (!DATE.test(value)) return undefined;
  const date = new Date(`${value}T00:00:00.000Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value
    ? undefined
    : date;
}

function cursor(value: string | undefined): AuditCursor | undefined | false {
  if (!value) return undefined;
  const match = CURSOR.exec(value);
  if (!match?.[1] || !match[2] || !UUID.test(match[2])) return false;
  if (Number.isNaN(new Date(match[1]).getTime())) return false;
  return { time: match[1], id: match[2] };
}

/**
 * The page's GET query, checked: member (a user id), tool, outcome, from/to (UTC days, `to`
 * inclusive) and at most one keyset cursor. Anything else is a mistake, said so in words.
 */
export function parseAuditQuery(query: Record<string, string | undefined>): ParsedQuery {
  const values: AuditFilterValues = {
    member: (query.member ?? "").trim().toLowerCase(),
    tool: (query.tool ?? "").trim(),
    outcome: (query.outcome ?? "").trim(),
    from: (query.from ?? "").trim(),
    to: (query.to ?? "").trim(),
  };
  const fail = (error: string): ParsedQuery => ({ ok: false, values, error });
  if (values.member && !UUID.test(values.member)) return fail("That member is not valid.");
  if (values.tool && !TOOL.test(values.tool)) return fail("That event kind is not valid.");
  if (values.outcome && !(AUDIT_OUTCOMES as readonly string[]).includes(values.outcome)) {
    return fail("That outcome is not valid.");
  }
  const from = values.from ? day(values.from) : undefined;
  const to = values.to ? day(values.to) : undefined;
  if ((values.from && !from) || (values.to && !to)) return fail("Dates must be YYYY-MM-DD.");
  if (from && to && from > to) return fail("The From date is after the To date.");
  const before = cursor(query.before);
  const after = cursor(query.after);
  if (before === false || after === false || (before && after)) {
    return fail("That page link is not valid: start again from the newest events.");
  }
  return {
    ok: true,
    values,
    filters: {
      actorId: values.member || undefined,
      tool: values.tool || undefined,
      outcome: values.outcome || undefined,
      from,
      to: to ? new Date(to.getTime() + DAY_MS) : undefined,
    },
    before,
    after,
  };
}

/** Audit (SPEC §8): the ledger, filtered by member, event, outcome and date, 50 a page. */
export function auditRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
  app.get("/audit", async (c) => {
    const parsed = parseAuditQuery(c.req.query());
    const view = await ctx.asManager<AuditView | null>(c, "admin_audit", async (tx, tenant) => {
      const request = { organizationId: tenant.organizationId, requesterId: tenant.userId };
      const page = parsed.ok
        ? await readAuditPageForAdmin(tx, {
            ...request,
            ...parsed.filters,
            before: parsed.before,
            after: parsed.after,
            size: AUDIT_PAGE_SIZE,
          })
        : // The manager check still runs before the form (and its member list) is shown.
          await readAuditPageForAdmin(tx, { ...request, size: 1 });
      if (!page.ok) return { value: null, outcome: "rejected" };
      const members = (await listMembers(tx, { organizationId: tenant.organizationId })).map(
        (m) => ({ userId: m.userId, email: m.email, removed: m.removedAt !== null }),
      );
      const base = { members, filters: parsed.values };
      if (!parsed.ok) {
        const value = { ...base, events: [], older: null, newer: null, paged: false };
        return { value: { ...value, error: parsed.error }, outcome: "rejected", reason: "invalid" };
      }
      const value = {
        ...base,
        events: page.events,
        older: page.older,
        newer: page.newer,
        paged: parsed.before !== undefined || parsed.after !== undefined,
      };
      return { value, outcome: "read", affected: page.events.length };
    });
    if (!view) return c.html(refusedPage(), 403);
    const csrf = c.get("manager").csrfToken;
    return c.html(auditPage(view, csrf), view.error ? 400 : 200);
  });
}
