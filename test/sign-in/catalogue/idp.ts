// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * Issue 21, points 7 and 10, and sign_in_member's part of point 9: email look-alikes, the
 * userinfo endpoint behind a thin ID token, and the member match inside the organisation's
 * transaction.
 */
import type { Entry } from "../../support/catalogue.ts";

const SUITE_1 = "test/security/sign-in-email-lookalike.test.ts";
const SUITE_2 = "test/sign-in/idp-userinfo.test.ts";

export const SUITES = [SUITE_1, SUITE_2];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE_1,
      name: "email look-alikes at sign-in refuses an IdP identity whose email is a KELVIN SIGN look-alike of a member's, and binds nothing",
    },
    mutation: {
      file: "packages/db/src/sign-in.ts",
      find: 'AND ${normalizedEmailSql("m.email")} = ${normalizedEmailSql("p_email")}',
      replace: "AND lower(m.email) = lower(p_email)",
      why: "sign_in_member matches emails with lower(), as before",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "email look-alikes at sign-in still signs the ASCII member in after the look-alike tried, bound to her own identity",
    },
    mutation: {
      file: "packages/db/src/sign-in.ts",
      find: 'AND ${normalizedEmailSql("m.email")} = ${normalizedEmailSql("p_email")}',
      replace: "AND lower(m.email) = lower(p_email)",
      why: "sign_in_member matches emails with lower(), as before",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "email look-alikes at sign-in finds no organisation's IdP for a look-alike of its domain",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/routes/email.ts",
      in: "domain",
      find: "EMAIL_DOMAIN.exec(normalizeEmail(email))?.[1]",
      replace: "EMAIL_DOMAIN.exec(email.toLowerCase())?.[1]",
      why: "the sign-in page lower-cases the email with toLowerCase(), which folds U+212A",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "email look-alikes at sign-in does not reinstate a removed member when the operator adds a look-alike of her email",
    },
    mutation: {
      in: "addMember",
      find: '${sql.raw(normalizedEmailSql("members.email"))} = ${normalizeEmail(email)}',
      replace: "lower(${members.email}) = lower(${email})",
      why: "addMember finds the member to reinstate with lower(), as before",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "email look-alikes at sign-in normalises emails the same way in TypeScript and in SQL",
    },
    mutation: {
      in: "normalizeEmail",
      find: ".replace(/[A-Z]/g, (c) => c.toLowerCase());",
      replace: ".toLowerCase();",
      why: "the TypeScript half lower-cases every letter, the SQL half only A–Z",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "email look-alikes at sign-in keeps sign_in_member to the transaction's organisation: without a tenant it refuses",
    },
    mutation: {
      find: "  v_role text;\nBEGIN\n  IF v_organization_id IS NULL THEN",
      replace: "  v_role text;\nBEGIN\n  IF false THEN",
      why: "sign_in_member runs without a tenant instead of refusing",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "userinfo claims behind a thin ID token refuses a userinfo answer about another subject than the ID token's, and binds nothing",
    },
    mutation: {
      in: "userinfo",
      find: "tokens.access_token, idToken.sub)",
      replace: "tokens.access_token, oidc.skipSubjectCheck)",
      why: "the userinfo answer's sub is not checked against the ID token's",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "userinfo claims behind a thin ID token signs a member in with the email the userinfo endpoint gives for the ID token's subject",
    },
    mutation: {
      in: "createIdentityProviders",
      find: "if (lacksEmailClaims(idToken)) {",
      replace: "if (lacksEmailClaims(idToken) && false) {",
      why: "the email claims are read from the ID token only, never from userinfo",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "userinfo claims behind a thin ID token says the firm's sign-in is unreachable when the userinfo endpoint drops the connection",
    },
    mutation: {
      in: "idpFailure",
      find: 'if (error instanceof TypeError || (error as { code?: string }).code === "OAUTH_TIMEOUT") {',
      replace: "if (false) {",
      why: "every IdP failure is reported as a login that did not hold, never as unreachable",
    },
  },
  {
    check: {
      file: "test/sign-in/idp.test.ts",
      name: "sign-in through the organisation's identity provider, claims at userinfo (thin ID token) finds the IdP by email domain, maps the verified identity to the member and binds it",
    },
    mutation: {
      in: "createIdentityProviders",
      find: "if (lacksEmailClaims(idToken)) {",
      replace: "if (lacksEmailClaims(idToken) && false) {",
      why: "the email claims are read from the ID token only, never from userinfo",
    },
  },
];
