import { WORKING_PROFILE_GUIDANCE } from "@north/agent-runtime";
import type { Capability } from "../../tool-definition.ts";
import { onboardPrompt } from "./onboard.ts";
import { readWorkingProfile } from "./read.ts";
import { saveWorkingProfileAnswer } from "./save.ts";

/** How each lawyer works: both profile tools, the onboarding prompt and their guidance. */
export const workingProfileCapability: Capability = {
  id: "working-profile",
  scopes: ["profile:write"],
  tools: [readWorkingProfile, saveWorkingProfileAnswer],
  prompts: [onboardPrompt],
  guidance: WORKING_PROFILE_GUIDANCE,
};
