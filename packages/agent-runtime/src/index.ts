export { ANSWER_MAX_CHARS, checkAnswer, checkQuestion, QUESTION_MAX_CHARS } from "./bounds.ts";
export { type Checked, NORTH_CODES, type NorthCode, type Rejection } from "./codes.ts";
export {
  DISCLOSURE,
  onboardingPromptText,
  READ_TOOL,
  SAVE_TOOL,
  WORKING_PROFILE_GUIDANCE,
} from "./onboarding.ts";
export {
  type DisplayedQuestion,
  displayQuestion,
  type QuestionSource,
  type SuggestedQuestion,
  suggestQuestions,
} from "./profile-view.ts";
export {
  type BankQuestion,
  findBankQuestion,
  LEGACY_QUESTION_LABEL,
  LOCALES,
  type Locale,
  QUESTION_BANK,
  RETIRED_QUESTION_IDS,
} from "./question-bank.ts";
export {
  AUTO_ID_PREFIX,
  autoQuestionId,
  QUESTION_ID_MAX_CHARS,
  type QuestionIdKind,
  type ResolvedQuestionId,
  resolveQuestionId,
} from "./question-id.ts";
export { codePointLength, sanitizeBody, sanitizeLine } from "./sanitize.ts";
