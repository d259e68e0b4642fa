// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue's entries for remembered-tokens.test.ts (decision 036):
 * for each check, the product change that turns it red. Gathered in
 * scripts/acceptance-mutations.ts.
 */
import type { Entry } from "../../support/catalogue.ts";

export const SUITE = "test/security/remembered-tokens.test.ts";
/** A remembered token while PostgreSQL is down (test/faults: the suite stops its own server). */
export const OUTAGE_SUITE = "test/faults/remembered-outage.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) remembers: the second request of a token comes back unproven, the first looked up",
    },
    mutation: {
      file: "apps/mcp-server/src/oauth.ts",
      in: "createAuthResolver",
      find: "const recalled = options?.mayRemember ? remembered.recall(apiTokenHash) : undefined;",
      replace: "const recalled = remembered.recall(apiTokenHash);",
      why: "every route, not only POST /mcp, is answered from memory",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) revoked: the next save is refused 401 and writes neither a row nor an audit row",
    },
    mutation: {
      in: "options",
      find: "const options = { proof: ctx.proof?.proof };",
      replace: "const options = { proof: undefined };",
      why: "the call's transaction sets the remembered tenant without proving the token",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) member removed: the next save is refused 401 and writes nothing",
    },
    mutation: {
      file: "apps/mcp-server/src/tool-runner.ts",
      find: '      if (ctx.proof && isCredentialRefused(error)) ctx.proof.state = "refused";\n',
      replace: '      if (ctx.proof && isCredentialRefused(error)) ctx.proof.state = "proven";\n',
      why: "a transaction the database refused counts as proof, so its internal error is answered",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) expired: the next save after the expiry is refused 401 and writes nothing",
    },
    mutation: {
      find: "        AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now())\n    ), touched AS (",
      replace: "    ), touched AS (",
      why: "an expired token still resolves",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) revoked: every other kind of request is refused 401 too, none answered from memory",
    },
    mutation: {
      in: "buildMcpRoutes",
      find: 'if (!proof || proof.state === "proven") return response;',
      replace: 'if (!proof || proof.state !== "refused") return response;',
      why: "a tool call that ran no transaction (invalid arguments, unknown tool) is answered unproven",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) revoked while the limiter refuses: 401, and no rate_limited row is audited",
    },
    mutation: {
      in: "enterAsApiTokenDefiner",
      find: "  PERFORM 1 FROM public.${RESOLVE_TOKEN_FUNCTION}(p_token_hash) r",
      replace:
        "  PERFORM 1 FROM (SELECT p_token_id AS token_id, p_organization_id AS organization_id, p_user_id AS user_id, p_role AS role, pg_catalog.string_to_array(p_scopes, ' ') AS scopes) r",
      why: "the proof sets the tenant whatever the token says",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) revoked while its protocol budget is spent: 401, and no mcp_protocol row is audited",
    },
    mutation: {
      in: "buildMcpRoutes",
      find: "meterPost(body, principal, requestId, { ...options, prove: proven })",
      replace: "meterPost(body, principal, requestId, options)",
      why: "the protocol meter audits and answers its refusal for an unproven principal",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) demoted: the call runs as the member the token names now, never as the remembered manager",
    },
    mutation: {
      in: "enterAsApiTokenDefiner",
      find: "    AND r.user_id = p_user_id\n    AND r.role = p_role\n",
      replace: "    AND r.user_id = p_user_id\n",
      why: "the proof does not compare the role, so a demoted manager runs as a manager",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) scopes narrowed under the same token: a save and a forget are the scope gate's 403",
    },
    mutation: {
      in: "enterAsApiTokenDefiner",
      find: "    AND r.scopes @> pg_catalog.string_to_array(p_scopes, ' ')\n    AND r.scopes <@ pg_catalog.string_to_array(p_scopes, ' ');",
      replace: "    ;",
      why: "the proof does not compare the scopes, so a token narrowed in place keeps the scopes North remembered",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a remembered API token whose grant ended (decision 036) scopes narrowed to a list with repeats: a call with invalid arguments is the scope gate's 403",
    },
    mutation: {
      in: "samePrincipal",
      find: "    a.scopes.every((scope) => b.scopes.includes(scope)) &&\n    b.scopes.every((scope) => a.scopes.includes(scope))",
      replace:
        "    a.scopes.length === b.scopes.length &&\n    a.scopes.every((scope) => b.scopes.includes(scope))",
      why: "scopes compared by length and one direction: a narrowed list with repeats passes as the remembered one",
    },
  },
  {
    check: {
      file: OUTAGE_SUITE,
      name: "a remembered API token while PostgreSQL is down (decision 036) calls the outage stopped spend nothing of the member's write budget",
    },
    mutation: {
      in: "failedCall",
      find: 'if (ctx.proof?.state === "pending") await ctx.limiter.refund(principal, tool.kind);',
      replace: "",
      why: "a call the outage stopped before anything proved its remembered credential keeps its point",
    },
  },
];

export const SUITES = [SUITE, OUTAGE_SUITE];
