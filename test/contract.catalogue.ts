// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of contract.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/contract.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "what each kind of principal is offered lists the tools and prompts of a 'read-only' principal",
    },
    mutation: {
      in: "activeCapabilities",
      find: 'return all.filter((capability) => authorize(principal, "capability", capability.id, all).allowed);',
      replace: "return [...all];",
      why: "list every capability regardless of scopes",
    },
  },
  {
    check: {
      file: SUITE,
      name: "what each kind of principal is offered 8. refuses a read-only principal that calls the profile tools or the prompt anyway",
    },
    mutation: {
      in: "missingScopes",
      find: 'if (method !== "tools/call" && method !== "prompts/get") continue;',
      replace: 'if (method !== "tools/call") continue;',
      why: "only tools/call is scope-checked before the SDK; prompts/get slips past the 403",
    },
  },
  {
    check: {
      file: SUITE,
      name: "what each kind of principal is offered answers a call outside the principal's scopes with 403 and an insufficient_scope challenge",
    },
    mutation: {
      in: "scopeRefusal",
      find: '(scope) => `${options.challenge}, error="insufficient_scope", scope="${scope}"`,',
      replace: "() => options.challenge,",
      why: "a 403 without the insufficient_scope challenge",
    },
  },
  {
    check: {
      file: SUITE,
      name: "what each kind of principal is offered answers an unknown tool with a JSON-RPC error naming scopes, not a crash",
    },
    mutation: {
      file: "apps/mcp-server/src/server.ts",
      find: "    if (!tool) {\n      throw new ProtocolError(",
      replace: "    if (false) {\n      throw new ProtocolError(",
      why: "drop the unknown-tool guard: the call crashes on an undefined tool",
    },
  },
  {
    check: {
      file: SUITE,
      name: "what each kind of principal is offered gives the onboard prompt its title and an optional locale",
    },
    mutation: {
      in: "describePrompt",
      find: "required: !schema.safeParse(undefined).success,",
      replace: "required: true,",
      why: "publish every prompt argument as required",
    },
  },
  {
    check: {
      file: SUITE,
      name: "server instructions name both profile tools and carry the disclosure for a profile writer",
    },
    mutation: {
      in: "WORKING_PROFILE_GUIDANCE",
      find: " before the first save, tell the lawyer that ${DISCLOSURE}. Never invent",
      replace: " Never invent",
      why: "trim the disclosure from the server guidance",
    },
  },
  {
    check: {
      file: SUITE,
      name: "server instructions imply no completion anywhere the model reads",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/working-profile/read.ts",
      in: "outputSchema",
      find: "\"Only for view 'next': bank questions not answered yet.",
      replace: "\"Only for view 'next': the remaining bank questions.",
      why: "describe suggestions as what 'remains' to answer",
    },
  },
  {
    check: {
      file: SUITE,
      name: "server instructions say nothing about the working profile to a read-only principal",
    },
    mutation: {
      file: "apps/mcp-server/src/manifest.ts",
      find: "  return {\n    instructions: composeInstructions(capabilities),",
      replace: "  return {\n    instructions: composeInstructions(all),",
      why: "compose the manifest's instructions from every capability, not the active ones",
    },
  },
  {
    check: { file: SUITE, name: "capability ownership gives every tool exactly one capability" },
    mutation: {
      in: "createMemoryReadCapability",
      find: "tools: [createBriefingTool(deps), createRecallTool(deps), heldTool],",
      replace: "tools: [createBriefingTool(deps), createRecallTool(deps), heldTool, forgetTool],",
      why: "offer forget to memory readers too",
    },
  },
  {
    check: {
      file: SUITE,
      name: "capability ownership memory-read's guidance names only tools it owns",
    },
    mutation: {
      in: "MEMORY_READ_GUIDANCE",
      find: "call ${HELD_TOOL} and show all of it.`",
      replace: "call ${HELD_TOOL} and show all of it; to erase it, call ${FORGET_TOOL}.`",
      why: "reading guidance tells the model to call the writing capability's forget tool",
    },
  },
  {
    check: {
      file: SUITE,
      name: "capability ownership catches guidance that names a tool its capability does not own",
    },
    mutation: {
      in: "foreignToolsInGuidance",
      find: "const own = new Set(capability.tools.map((tool) => tool.name));",
      replace:
        "const own = new Set(CAPABILITIES.flatMap((c) => c.tools).map((tool) => tool.name));",
      why: "check guidance against every known tool instead of the capability's own",
    },
  },
  {
    check: {
      file: SUITE,
      name: "published tool schemas north__working_profile_answer matches its reviewed snapshot",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/working-profile/save.ts",
      in: "outputSchema",
      find: 'retry_after_s: z.number().int().optional().describe("For NORTH_RATE_LIMITED: seconds to wait."),',
      replace:
        'retry_after_s: z.number().optional().describe("For NORTH_RATE_LIMITED: seconds to wait."),',
      why: "loosen retry_after_s from integer to number in the published output schema",
    },
  },
  {
    check: {
      file: SUITE,
      name: "published tool schemas marks the read tool read-only and idempotent, and the save tool idempotent and not destructive",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/annotations.ts",
      find: "  readOnlyHint: false,\n  destructiveHint: false,\n  idempotentHint: true,\n",
      replace: "  readOnlyHint: false,\n  destructiveHint: false,\n  idempotentHint: false,\n",
      why: "annotate the save tool (and remember, which shares its annotations) as not idempotent",
    },
  },
  {
    check: {
      file: SUITE,
      name: "published tool schemas serves the same manifest at GET /manifest as the model receives over MCP",
    },
    mutation: {
      in: "buildManifestRoutes",
      find: 'composeManifest(c.get("principal"), options.capabilities, {',
      replace:
        'composeManifest({ ...c.get("principal"), scopes: ["profile:write", "memory:read", "memory:write", "admin"] }, options.capabilities, {',
      why: "GET /manifest shows every tool whatever the token's scopes",
    },
  },
  {
    check: {
      file: SUITE,
      name: "what each kind of principal is offered writes the French prompt without an English sentence",
    },
    mutation: {
      in: "PROMPT_TEXT",
      find: "    \"Avant d'enregistrer quoi que ce soit, dis-moi que ce que tu enregistres est ta transcription de mes propos et que les responsables de l'espace de travail peuvent le voir.\",",
      replace: "    `Avant d'enregistrer quoi que ce soit, dis-moi que ${DISCLOSURE}.`,",
      why: "reuse the English disclosure inside the French prompt",
    },
  },
  {
    check: {
      file: SUITE,
      name: "what each kind of principal is offered keeps the English prompt in the lawyer's own voice",
    },
    mutation: {
      in: "PROMPT_TEXT",
      find: '    "Before you save anything, tell me that what you save is your transcription of my words and that the workspace\'s managers can see it.",',
      replace: "    `Before you save anything, tell me that ${DISCLOSURE}.`,",
      why: "speak of 'the lawyer' in a prompt the lawyer sends",
    },
  },
  {
    check: {
      file: SUITE,
      name: "server instructions open with the safety rules and end with the data-boundary and honesty reminder for a 'full' principal",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/index.ts",
      find: "    ...SAFETY_RULES,\n    PREAMBLE,\n    ...capabilities.flatMap((c) => c.guidance),\n",
      replace:
        "    PREAMBLE,\n    ...capabilities.flatMap((c) => c.guidance),\n    ...SAFETY_RULES,\n",
      why: "put the safety rules last, where Claude Code's 2,048-character cut drops them",
    },
  },
  {
    check: {
      file: SUITE,
      name: "server instructions give one order at the start of a conversation: the briefing first, which holds the profile",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/index.ts",
      find: "    createMemoryReadCapability(memory),\n    workingProfileCapability,\n",
      replace: "    workingProfileCapability,\n    createMemoryReadCapability(memory),\n",
      why: "compose the profile's guidance before the briefing's",
    },
  },
  {
    check: {
      file: SUITE,
      name: "server instructions cover special categories of personal data in the safety rules and the remember tool",
    },
    mutation: {
      in: "SPECIAL_CATEGORIES",
      find: "health, trade-union membership, religious or philosophical beliefs, political opinions, sex life or orientation, racial or ethnic origin, criminal offences",
      replace: "sensitive details",
      why: "leave the special categories unnamed",
    },
  },
  {
    check: {
      file: SUITE,
      name: "published tool schemas does not state a write-time rule on the lookup tools' subject fields",
    },
    mutation: {
      in: "subjectLookupTypeSchema",
      find: "`Optional: narrows the lookup to one kind of subject,",
      replace:
        "`Required with subject_id for every observation. Optional: narrows the lookup to one kind of subject,",
      why: "copy the write tool's subject rule onto the lookups",
    },
  },
  {
    check: {
      file: SUITE,
      name: "published tool schemas states the expiry bound in the published schema, not only in its text",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/memory/remember.ts",
      find: "    .min(1)\n    .max(MAX_MEMORY_EXPIRY_DAYS)\n",
      replace: "",
      why: "state 1–365 only in the description",
    },
  },
  {
    check: {
      file: SUITE,
      name: "capability activations in GET /manifest shows the working profile off with scope_off and semantic recall off with no_embedder for a read-only token",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/index.ts",
      find: '        ? "no_embedder"\n',
      replace: "        ? undefined\n",
      why: "report semantic recall active without an embedder",
    },
  },
  {
    check: {
      file: SUITE,
      name: "capability activations in GET /manifest turns semantic recall on when an embedder is configured, and off again without the scope",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/index.ts",
      find: "          ? `degraded:${options.embedderFailure}`\n",
      replace: "          ? undefined\n",
      why: "report a failing embedder as healthy",
    },
  },
];
