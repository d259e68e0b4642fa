import {
  findBankQuestion,
  LEGACY_QUESTION_LABEL,
  type Locale,
  QUESTION_BANK,
} from "./question-bank.ts";

export type QuestionSource = "recorded" | "bank" | "legacy_label";

export interface DisplayedQuestion {
  question: string;
  questionSource: QuestionSource;
}

/**
 * The wording to show for a stored row: its recorded text, else the bank's wording for its id,
 * else the legacy label. Rows saved before question text was recorded have `null` text.
 */
export function displayQuestion(
  questionId: string,
  recorded: string | null,
  locale: Locale = "en",
): DisplayedQuestion {
  if (recorded !== null) return { question: recorded, questionSource: "recorded" };
  const bank = findBankQuestion(questionId);
  if (bank) return { question: bank.wording[locale], questionSource: "bank" };
  return { question: LEGACY_QUESTION_LABEL, questionSource: "legacy_label" };
}

export interface SuggestedQuestion {
  question_id: string;
  question: string;
}

/**
 * Bank questions whose id is not answered yet, as guidance. An empty list means only that the
 * bank has nothing more to offer; the profile is never complete and custom questions stay welcome.
 */
export function suggestQuestions(
  answeredIds: Iterable<string>,
  locale: Locale = "en",
): SuggestedQuestion[] {
  const answered = new Set(answeredIds);
  return QUESTION_BANK.filter((entry) => !answered.has(entry.id)).map((entry) => ({
    question_id: entry.id,
    question: entry.wording[locale],
  }));
}
