import { onboardingPromptText } from "@north/agent-runtime";
import { z } from "zod";
import type { PromptDefinition } from "../../tool-definition.ts";

const argsSchema = z.object({
  locale: z
    .enum(["en", "fr"])
    .optional()
    .describe("Language of the onboarding conversation: 'en' (default) or 'fr'."),
});

export const onboardPrompt = {
  name: "onboard",
  title: "Onboard me on North",
  description:
    "Start or resume onboarding: the assistant learns how you work, one question at a time, and saves each answer to your working profile.",
  argsSchema,
  render: (args) => [{ role: "user", text: onboardingPromptText(args.locale ?? "en") }],
} satisfies PromptDefinition<typeof argsSchema>;
