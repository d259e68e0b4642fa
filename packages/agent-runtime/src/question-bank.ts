/**
 * The optional question bank (SPEC §4). It is guidance the model may reword or skip: it never
 * limits what may be asked or saved, and nothing measures a profile against it.
 */

export const LOCALES = ["en", "fr"] as const;
export type Locale = (typeof LOCALES)[number];

export interface BankQuestion {
  id: string;
  wording: Record<Locale, string>;
}

export const QUESTION_BANK: readonly BankQuestion[] = [
  {
    id: "practice-areas",
    wording: {
      en: "Which practice areas do you mostly work in?",
      fr: "Dans quels domaines du droit travaillez-vous principalement ?",
    },
  },
  {
    id: "jurisdictions-courts",
    wording: {
      en: "Which jurisdictions and courts do you usually deal with?",
      fr: "Avec quelles juridictions et quels tribunaux travaillez-vous habituellement ?",
    },
  },
  {
    id: "role-team",
    wording: {
      en: "What is your role, and who is on your team?",
      fr: "Quel est votre rôle, et qui fait partie de votre équipe ?",
    },
  },
  {
    id: "drafting-style",
    wording: {
      en: "How do you like documents to be drafted: length, structure, tone?",
      fr: "Comment aimez-vous que les documents soient rédigés : longueur, structure, ton ?",
    },
  },
  {
    id: "citation-conventions",
    wording: {
      en: "Which citation conventions do you follow?",
      fr: "Quelles conventions de citation suivez-vous ?",
    },
  },
  {
    id: "review-priorities",
    wording: {
      en: "When you review a document, what should be flagged first?",
      fr: "Lorsque vous relisez un document, que faut-il signaler en premier ?",
    },
  },
  {
    id: "working-languages",
    wording: {
      en: "In which languages do you work, and with whom?",
      fr: "Dans quelles langues travaillez-vous, et avec qui ?",
    },
  },
  {
    id: "client-tone",
    wording: {
      en: "What tone do you take with clients in writing?",
      fr: "Quel ton adoptez-vous par écrit avec vos clients ?",
    },
  },
  {
    id: "deadlines-priorities",
    wording: {
      en: "How do you track deadlines, and what usually takes priority?",
      fr: "Comment suivez-vous vos échéances, et qu'est-ce qui passe en priorité ?",
    },
  },
  {
    id: "research-sources",
    wording: {
      en: "Which research sources do you trust most?",
      fr: "À quelles sources de recherche faites-vous le plus confiance ?",
    },
  },
];

/**
 * Ids that were once in the bank. Rows saved under them before question text was recorded read
 * with the legacy label; they are kept here so that path stays tested.
 */
export const RETIRED_QUESTION_IDS: readonly string[] = ["billing-software", "preferred-font"];

/** Shown for a row whose question text was never recorded and whose id left the bank. */
export const LEGACY_QUESTION_LABEL = "legacy question (text not recorded)";

export function findBankQuestion(id: string): BankQuestion | undefined {
  return QUESTION_BANK.find((entry) => entry.id === id);
}
