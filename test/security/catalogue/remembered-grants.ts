// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue's entries for remembered-grants.test.ts (decision 041): for
 * each check, the product change that turns it red. Gathered in scripts/acceptance-mutations.ts.
 */
import type { Entry } from "../../support/catalogue.ts";

export const SUITE = "test/security/remembered-grants.test.ts";

const SUITE_NAME = "a remembered North access token whose grant ended (decision 041)";
const MORE = "more ways a remembered grant ends or changes (decision 041, a helper's cases)";

/** The function no longer asks `resolve_oauth_grant` whether the grant still holds. */
const UNCHECKED_GRANT = {
  in: "enterAsOAuthGrantDefiner",
  find: "  PERFORM 1 FROM public.${RESOLVE_GRANT_FUNCTION}(p_user_id, p_client_id, p_grant_id) r",
  replace:
    "  PERFORM 1 FROM (SELECT p_organization_id AS organization_id, p_role AS role, pg_catalog.string_to_array(p_scope_cap, ' ') AS scope_cap) r",
} as const;

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} remembers: a tool call's second request comes back unproven, naming its grant`,
    },
    mutation: {
      file: "apps/mcp-server/src/oauth.ts",
      find: "      remembered.learn(token, found);\n",
      replace: "",
      why: "a North access token's grant is never remembered: every call looks it up first",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} consent revoked: the next save is refused 401 and writes nothing`,
    },
    mutation: { ...UNCHECKED_GRANT, why: "the grant's proof sets the tenant without checking" },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} member removed: the next save is refused 401 and writes nothing`,
    },
    mutation: {
      in: "tenantStatement",
      find: "    ? enterStatement(tenant, proof)",
      replace:
        '    ? "grantId" in proof ? { text: "select set_config($1, $2, true), set_config($3, $4, true)", params: ["north.organization_id", tenant.organizationId, "north.user_id", tenant.userId] } : enterStatement(tenant, proof)',
      why: "a remembered grant's transaction sets its tenant as a looked-up one would, unproven",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} the API token that opened the grant revoked: the next save is refused 401`,
    },
    mutation: {
      ...UNCHECKED_GRANT,
      why: "the proof does not run the grant's rules, the opening token's among them",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} the grant past its lifetime: the next save is refused 401`,
    },
    mutation: { ...UNCHECKED_GRANT, why: "the proof does not see the grant's lifetime" },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} the organisation given an IdP: a grant a pasted token opened is refused 401`,
    },
    mutation: { ...UNCHECKED_GRANT, why: "the proof does not see the organisation's IdP" },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} demoted: the call runs as the member the grant names now, never as the remembered manager`,
    },
    mutation: {
      in: "enterAsOAuthGrantDefiner",
      find: "    AND r.role = p_role\n",
      replace: "",
      why: "the proof accepts the remembered role whatever the member's role is now",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} cap narrowed under the same grant: the call the cap no longer covers is the scope gate's 403`,
    },
    mutation: {
      file: "apps/mcp-server/src/routes/mcp.ts",
      find: "    return (await gate(current)) ?? serve(current);",
      replace: "    return serve(current);",
      why: "whoever a refused credential names now is served without the scope gate",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} cap narrowed past memory:write: a forget by subject is the scope gate's 403, not an unknown tool`,
    },
    mutation: {
      in: "scopeRefusal",
      find: "if (proven && !samePrincipal(proven, who)) return scopeRefusal(c, proven, body, options);",
      replace: "",
      why: "a principal step-up looked up is served without meeting the scope gate: an unknown tool, not the 403",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${SUITE_NAME} removed: a forget that would ask a manager to step up is 401, never the step-up's 403`,
    },
    mutation: {
      file: "apps/mcp-server/src/step-up.ts",
      find: "  if (principal.unproven) {\n    const proven = await options.prove();",
      replace: "  if (principal.unproven && false) {\n    const proven = await options.prove();",
      why: "the step-up decides (and reads the tenant's memories) for a principal nothing proved",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${MORE} re-consent for the same client: the old grant's token is refused 401, the new one serves`,
    },
    mutation: { ...UNCHECKED_GRANT, why: "the proof accepts a grant a re-consent ended" },
  },
  {
    check: {
      file: SUITE,
      name: `${MORE} the API token that opened the grant expired: the next save is refused 401`,
    },
    mutation: { ...UNCHECKED_GRANT, why: "the proof does not see the opening token's expiry" },
  },
  {
    check: {
      file: SUITE,
      name: `${MORE} promoted: the call is refused by the database and served as the manager the member is now`,
    },
    mutation: {
      in: "enterAsOAuthGrantDefiner",
      find: "    AND r.role = p_role\n",
      replace: "",
      why: "a promoted member's call runs as the member North remembered",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${MORE} consent revoked: a memory_remember sends nothing to the embeddings provider`,
    },
    mutation: {
      file: "apps/mcp-server/src/tool-runner.ts",
      find: 'if (ctx.proof?.state === "pending" && tool.callsOut)',
      replace: 'if (ctx.proof?.state === "pending" && tool.callsOut && false)',
      why: "a tool that calls the embeddings provider runs before anything proved the grant",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${MORE} consent revoked: every other kind of request is refused 401 too, none answered from memory`,
    },
    mutation: {
      in: "buildMcpRoutes",
      find: 'if (!proof || proof.state === "proven") return response;',
      replace: 'if (!proof || proof.state !== "refused") return response;',
      why: "a request no transaction proved (a listing, invalid arguments) is answered unproven",
    },
  },
  {
    check: {
      file: SUITE,
      name: "enter_as_oauth_grant (decision 041) sets the tenant only for the exact member, client, grant, organisation, role and cap",
    },
    mutation: {
      in: "enterAsOAuthGrantDefiner",
      find: "    AND r.scope_cap IS NOT DISTINCT FROM pg_catalog.string_to_array(p_scope_cap, ' ');",
      replace: "    ;",
      why: "a grant whose scope cap changed still proves the scopes remembered from the old one",
    },
  },
];

export const SUITES = [SUITE];
