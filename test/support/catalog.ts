import type postgres from "postgres";

/**
 * A dump of everything provisioning owns — roles, memberships, ownership, grants, RLS flags,
 * policies and functions — read from the catalogs, so two states can be compared for equality.
 * (The machine's pg_dump cannot read a newer embedded server, and a catalog dump is exact.)
 */
export async function dumpSecurityState(sql: postgres.Sql, loginUser: string) {
  const roles = await sql`
    select rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin,
           rolreplication, rolbypassrls
    from pg_roles where rolname in ('forma', 'app_role', 'north_maintenance', ${loginUser})
    order by rolname`;
  const memberships = await sql`
    select r.rolname as role, m.rolname as member
    from pg_auth_members am
    join pg_roles r on r.oid = am.roleid
    join pg_roles m on m.oid = am.member
    where m.rolname in ('forma', 'app_role', ${loginUser}) order by 1, 2`;
  const tables = await sql`
    select c.relname, c.relowner::regrole::text as owner, c.relacl::text as acl,
           c.relrowsecurity, c.relforcerowsecurity
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p', 'v', 'S') order by 1`;
  const columns = await sql`
    select c.relname, a.attname, a.attacl::text as acl
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and a.attacl is not null order by 1, 2`;
  const policies = await sql`
    select tablename, policyname, permissive, roles::text, cmd, qual, with_check
    from pg_policies where schemaname = 'public' order by 1, 2`;
  const functions = await sql`
    select p.oid::regprocedure::text as signature, p.proowner::regrole::text as owner,
           p.prosecdef, p.proconfig::text as config, p.proacl::text as acl,
           pg_get_functiondef(p.oid) as definition
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'public'
      -- not an extension's (pgvector's, where the server has it: its aggregates have no definition)
      and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    order by 1`;
  const schema = await sql`select nspacl::text as acl from pg_namespace where nspname = 'public'`;
  return { roles, memberships, tables, columns, policies, functions, schema };
}
