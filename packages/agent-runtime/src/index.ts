export { ANSWER_MAX_CHARS, checkAnswer, checkQuestion, QUESTION_MAX_CHARS } from "./bounds.ts";
export { type Checked, NORTH_CODES, type NorthCode, type Rejection } from "./codes.ts";
export {
  estimateTokens,
  type FencedMemory,
  type FenceResult,
  fenceLine,
  MEMORY_FENCE_PREAMBLE,
  MEMORY_NOT_A_REASON,
  PROFILE_FENCE_PREAMBLE,
  renderMemoryFence,
  renderProfileFence,
} from "./memory-fence.ts";
export {
  canonicalSubjectId,
  checkConversationId,
  checkExpiryDays,
  checkMemoryBody,
  checkRecallQuery,
  checkSubject,
  checkSubjectLookup,
  DEFAULT_MEMORY_EXPIRY_DAYS,
  DEFAULT_RECALL_LIMIT,
  MAX_MEMORY_EXPIRY_DAYS,
  MAX_RECALL_LIMIT,
  MEMORY_BODY_MAX_CHARS,
  MEMORY_KINDS,
  MEMORY_ORIGINS,
  type MemoryKind,
  type MemoryOrigin,
  PERSON_SUBJECT_TYPES,
  RECALL_QUERY_MAX_CHARS,
  type Subject,
  type SubjectLookup,
  subjectKey,
  subjectKeyOf,
} from "./memory-rules.ts";
export {
  BRIEFING_TOOL,
  CLOSING_RULES,
  DISCLOSURE,
  FORGET_TOOL,
  HELD_TOOL,
  MEMORY_READ_GUIDANCE,
  MEMORY_WRITE_GUIDANCE,
  onboardingPromptText,
  READ_TOOL,
  RECALL_TOOL,
  REMEMBER_TOOL,
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
