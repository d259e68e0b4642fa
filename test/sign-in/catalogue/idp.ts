// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
import type { Entry } from "../../../scripts/acceptance-mutations.ts";

/**
 * Issue 21, points 7 and 10, and sign_in_member's part of point 9: email look-alikes, the
 * userinfo endpoint behind a thin ID token, and the member match inside the organisation's
 * transaction.
 */

const LOOKALIKE = "test/security/sign-in-email-lookalike.test.ts";
const USERINFO = "test/sign-in/idp-userinfo.test.ts";
const IDP_SUITE = "test/sign-in/idp.test.ts";

const IDENTITY_PROVIDER = "apps/mcp-server/src/sign-in/identity-provider.ts";
const EMAIL_SIGN_IN = "apps/mcp-server/src/sign-in/routes/email.ts";
/** Definer functions live beside their domains' stores: entries find them anywhere. */
const DEFINERS = undefined;
const DIRECTORY = "packages/db/src/directory.ts";
const EMAIL = "packages/db/src/email.ts";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [LOOKALIKE, USERINFO];

const lookalike = (title: string) => ({
  file: LOOKALIKE,
  name: `email look-alikes at sign-in ${title}`,
});
const userinfo = (title: string) => ({
  file: USERINFO,
  name: `userinfo claims behind a thin ID token ${title}`,
});

/** sign_in_member compares emails with lower() again, which maps U+212A onto "k". */
const LOWER_IN_SIGN_IN = {
  file: DEFINERS,
  find: 'AND ${normalizedEmailSql("m.email")} = ${normalizedEmailSql("p_email")}',
  replace: "AND lower(m.email) = lower(p_email)",
  why: "sign_in_member matches emails with lower(), as before",
};

/** North trusts the ID token alone and never asks the userinfo endpoint. */
const NO_USERINFO = {
  file: IDENTITY_PROVIDER,
  find: "if (lacksEmailClaims(idToken)) {",
  replace: "if (lacksEmailClaims(idToken) && false) {",
  why: "the email claims are read from the ID token only, never from userinfo",
};

export const MUTATIONS: readonly Entry[] = [
  {
    check: lookalike(
      "refuses an IdP identity whose email is a KELVIN SIGN look-alike of a member's, and binds nothing",
    ),
    mutation: LOWER_IN_SIGN_IN,
  },
  {
    check: lookalike(
      "still signs the ASCII member in after the look-alike tried, bound to her own identity",
    ),
    mutation: LOWER_IN_SIGN_IN,
  },
  {
    check: lookalike("finds no organisation's IdP for a look-alike of its domain"),
    mutation: {
      file: EMAIL_SIGN_IN,
      find: "EMAIL_DOMAIN.exec(normalizeEmail(email))?.[1]",
      replace: "EMAIL_DOMAIN.exec(email.toLowerCase())?.[1]",
      why: "the sign-in page lower-cases the email with toLowerCase(), which folds U+212A",
    },
  },
  {
    check: lookalike(
      "does not reinstate a removed member when the operator adds a look-alike of her email",
    ),
    mutation: {
      file: DIRECTORY,
      find: '${sql.raw(normalizedEmailSql("members.email"))} = ${normalizeEmail(email)}',
      replace: "lower(${members.email}) = lower(${email})",
      why: "addMember finds the member to reinstate with lower(), as before",
    },
  },
  {
    check: lookalike("normalises emails the same way in TypeScript and in SQL"),
    mutation: {
      file: EMAIL,
      find: ".replace(/[A-Z]/g, (c) => c.toLowerCase());",
      replace: ".toLowerCase();",
      why: "the TypeScript half lower-cases every letter, the SQL half only A–Z",
    },
  },
  {
    check: lookalike(
      "keeps sign_in_member to the transaction's organisation: without a tenant it refuses",
    ),
    mutation: {
      file: DEFINERS,
      find: "  v_role text;\nBEGIN\n  IF v_organization_id IS NULL THEN",
      replace: "  v_role text;\nBEGIN\n  IF false THEN",
      why: "sign_in_member runs without a tenant instead of refusing",
    },
  },
  {
    check: userinfo(
      "refuses a userinfo answer about another subject than the ID token's, and binds nothing",
    ),
    mutation: {
      file: IDENTITY_PROVIDER,
      find: "tokens.access_token, idToken.sub)",
      replace: "tokens.access_token, oidc.skipSubjectCheck)",
      why: "the userinfo answer's sub is not checked against the ID token's",
    },
  },
  {
    check: userinfo(
      "signs a member in with the email the userinfo endpoint gives for the ID token's subject",
    ),
    mutation: NO_USERINFO,
  },
  {
    check: userinfo(
      "says the firm's sign-in is unreachable when the userinfo endpoint drops the connection",
    ),
    mutation: {
      file: IDENTITY_PROVIDER,
      find: 'if (error instanceof TypeError || (error as { code?: string }).code === "OAUTH_TIMEOUT") {',
      replace: "if (false) {",
      why: "every IdP failure is reported as a login that did not hold, never as unreachable",
    },
  },
  {
    check: {
      file: IDP_SUITE,
      name: "sign-in through the organisation's identity provider, claims at userinfo (thin ID token) finds the IdP by email domain, maps the verified identity to the member and binds it",
    },
    mutation: NO_USERINFO,
  },
];
