-- Custom migration (drizzle-kit generate --custom): SPEC §5a's may-see rule and legal holds, as
-- the memories policies (0022) and the recall functions apply them. Both read the transaction's
-- tenant settings, never an argument, and run with the caller's rights: as the app role they
-- read matters, team and screens through those tables' own policies (its organisation only);
-- inside a definer function (owner) they filter by the organisation themselves. plpgsql, so
-- they may be created before the tables they read (0022); a policy calls them in a scalar
-- subquery, so each runs once per statement, not per row.
--
-- The matters the transaction's user may see: not screened from, and open or on its team. A
-- screen wins over the team and over the manager role (no role is read here at all).
CREATE OR REPLACE FUNCTION public.north_visible_matters() RETURNS uuid[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  v_organization_id uuid := nullif(current_setting('north.organization_id', true), '')::uuid;
  v_user_id uuid := nullif(current_setting('north.user_id', true), '')::uuid;
BEGIN
  IF v_organization_id IS NULL OR v_user_id IS NULL THEN
    RETURN '{}';
  END IF;
  RETURN coalesce((
    SELECT array_agg(mt.id)
    FROM public.matters mt
    WHERE mt.organization_id = v_organization_id
      AND NOT EXISTS (
        SELECT 1 FROM public.matter_screens s WHERE s.matter_id = mt.id AND s.user_id = v_user_id)
      AND (mt.access = 'open' OR EXISTS (
        SELECT 1 FROM public.matter_team t WHERE t.matter_id = mt.id AND t.user_id = v_user_id))
  ), '{}');
END
$fn$;
--> statement-breakpoint
-- The transaction organisation's matters under legal hold: their memories do not expire (they
-- stay live past expires_at) until the hold is released.
CREATE OR REPLACE FUNCTION public.north_held_matters() RETURNS uuid[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  v_organization_id uuid := nullif(current_setting('north.organization_id', true), '')::uuid;
BEGIN
  IF v_organization_id IS NULL THEN
    RETURN '{}';
  END IF;
  RETURN coalesce((
    SELECT array_agg(mt.id) FROM public.matters mt
    WHERE mt.organization_id = v_organization_id AND mt.held_since IS NOT NULL
  ), '{}');
END
$fn$;
