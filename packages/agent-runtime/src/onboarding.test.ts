import { describe, expect, it } from "vitest";
import { MEMORY_ORIGINS } from "./memory-rules.ts";
import {
  BRIEFING_TOOL,
  CLOSING_REMINDER,
  DISCLOSURE,
  FORGET_TOOL,
  HELD_TOOL,
  MEMORY_READ_GUIDANCE,
  MEMORY_WRITE_GUIDANCE,
  onboardingPromptText,
  READ_TOOL,
  RECALL_TOOL,
  REMEMBER_TOOL,
  SAFETY_RULES,
  SAVE_TOOL,
  TOOL_RULES,
  WORKING_PROFILE_GUIDANCE,
} from "./onboarding.ts";
import { LOCALES } from "./question-bank.ts";

/**
 * Behaviour, never wording (SPEC §4): which tools each text names, that the guidance carries the
 * disclosure, that no line is blank and that nothing sets a goal to complete. The text itself can
 * be reworded freely.
 */

const PROFILE_TOOLS = [READ_TOOL, SAVE_TOOL];
const MEMORY_READ_TOOLS = [BRIEFING_TOOL, RECALL_TOOL, HELD_TOOL];
const MEMORY_WRITE_TOOLS = [REMEMBER_TOOL, FORGET_TOOL];
const ALL_TOOLS = [...PROFILE_TOOLS, ...MEMORY_READ_TOOLS, ...MEMORY_WRITE_TOOLS];

/** What would turn the open-ended profile into something to finish, in English or French. */
const COMPLETION =
  /completion|profile is complete|complete the profile|% complete|progress|remaining|all questions answered|profil est complet|compléter le profil|questions restantes/i;

function expectNoBlankLine(lines: readonly string[]): void {
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(line.trim()).not.toBe("");
}

describe("tool names", () => {
  it("are distinct and carry North's prefix", () => {
    expect(new Set(ALL_TOOLS).size).toBe(ALL_TOOLS.length);
    for (const tool of ALL_TOOLS) expect(tool).toMatch(/^north__[a-z_]+$/);
  });
});

describe("working-profile guidance", () => {
  it("names both profile tools and carries the disclosure", () => {
    const text = WORKING_PROFILE_GUIDANCE.join("\n");
    for (const tool of PROFILE_TOOLS) expect(text).toContain(tool);
    expect(DISCLOSURE.trim()).not.toBe("");
    expect(text).toContain(DISCLOSURE);
  });

  it("names no memory tool and has no blank line", () => {
    const text = WORKING_PROFILE_GUIDANCE.join("\n");
    for (const tool of [...MEMORY_READ_TOOLS, ...MEMORY_WRITE_TOOLS]) {
      expect(text).not.toContain(tool);
    }
    expectNoBlankLine(WORKING_PROFILE_GUIDANCE);
  });

  it("sets no goal to complete", () => {
    expect(WORKING_PROFILE_GUIDANCE.join("\n")).not.toMatch(COMPLETION);
  });
});

describe("the onboard prompt", () => {
  it.each(LOCALES)("in %s names both profile tools", (locale) => {
    const text = onboardingPromptText(locale);
    for (const tool of PROFILE_TOOLS) expect(text).toContain(tool);
  });

  it.each(LOCALES)("in %s asks for the suggestions in its own locale", (locale) => {
    expect(onboardingPromptText(locale)).toMatch(new RegExp(`locale\\W+${locale}\\b`));
  });

  it.each(LOCALES)("in %s is several paragraphs, none of them blank", (locale) => {
    const paragraphs = onboardingPromptText(locale).split("\n\n");
    expect(paragraphs.length).toBeGreaterThan(1);
    expectNoBlankLine(paragraphs);
  });

  it.each(LOCALES)("in %s sets no goal to complete", (locale) => {
    expect(onboardingPromptText(locale)).not.toMatch(COMPLETION);
  });

  it("is written for each locale, English by default", () => {
    expect(new Set(LOCALES.map((locale) => onboardingPromptText(locale))).size).toBe(
      LOCALES.length,
    );
    expect(onboardingPromptText()).toBe(onboardingPromptText("en"));
  });
});

describe("memory guidance", () => {
  it("for reading names the briefing, recall and held tools, and no write tool", () => {
    const text = MEMORY_READ_GUIDANCE.join("\n");
    for (const tool of MEMORY_READ_TOOLS) expect(text).toContain(tool);
    for (const tool of [...MEMORY_WRITE_TOOLS, ...PROFILE_TOOLS]) expect(text).not.toContain(tool);
    expectNoBlankLine(MEMORY_READ_GUIDANCE);
  });

  it("for writing names the remember and forget tools, and no read tool", () => {
    const text = MEMORY_WRITE_GUIDANCE.join("\n");
    for (const tool of MEMORY_WRITE_TOOLS) expect(text).toContain(tool);
    for (const tool of [...MEMORY_READ_TOOLS, ...PROFILE_TOOLS]) expect(text).not.toContain(tool);
    expectNoBlankLine(MEMORY_WRITE_GUIDANCE);
  });

  it("keeps the two origins apart by name, for reading (the read tools' rule) and for writing", () => {
    for (const text of [TOOL_RULES.origins, MEMORY_WRITE_GUIDANCE.join("\n")]) {
      for (const origin of MEMORY_ORIGINS) expect(text).toContain(`'${origin}'`);
    }
  });

  it("for writing names both subject fields", () => {
    const text = MEMORY_WRITE_GUIDANCE.join("\n");
    expect(text).toContain("subject_type");
    expect(text).toContain("subject_id");
  });
});

describe("the safety rules and the closing reminder", () => {
  it("name no tool, so they hold whichever capabilities are active", () => {
    expect([...SAFETY_RULES, CLOSING_REMINDER].join("\n")).not.toMatch(/north__/);
  });

  it("have no blank line", () => {
    expectNoBlankLine([...SAFETY_RULES, CLOSING_REMINDER]);
  });

  it("cover the data boundary, honesty and special categories of personal data", () => {
    const text = SAFETY_RULES.join("\n");
    expect(text).toMatch(/never instructions/);
    expect(text).toMatch(/receipt/);
    for (const category of [/health/i, /union/i, /belief/i, /offence/i]) {
      expect(text).toMatch(category);
    }
  });
});
