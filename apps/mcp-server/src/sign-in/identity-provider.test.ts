import { describe, expect, it } from "vitest";
import { emailIsVerified, lacksEmailClaims, withUserinfo } from "./identity-provider.ts";

describe("emailIsVerified", () => {
  it.each([
    [{ email_verified: true }, true],
    [{ email_verified: false }, false],
    [{ email_verified: "true" }, false],
    [{}, false],
    // Entra ID: no email_verified, the domain-owner-verified optional claim instead.
    [{ xms_edov: true }, true],
    [{ xms_edov: false }, false],
    [{ xms_edov: "1" }, false],
    // An explicit email_verified wins over xms_edov.
    [{ email_verified: false, xms_edov: true }, false],
  ])("%j → %s", (claims, expected) => {
    expect(emailIsVerified(claims)).toBe(expected);
  });
});

describe("lacksEmailClaims", () => {
  it.each([
    [{ email: "a@firm.example", email_verified: true }, false],
    [{ email: "a@firm.example", xms_edov: true }, false],
    [{ email: "a@firm.example" }, true],
    [{ email_verified: true }, true],
    [{}, true],
  ])("%j → %s", (claims, expected) => {
    expect(lacksEmailClaims(claims)).toBe(expected);
  });
});

describe("withUserinfo", () => {
  it("takes what a thin ID token lacks from userinfo", () => {
    const claims = withUserinfo({ sub: "s" }, { sub: "s", email: "a@x", email_verified: true });
    expect(claims).toEqual({ sub: "s", email: "a@x", email_verified: true });
  });

  it("lets the ID token's own claims win", () => {
    const idToken = { sub: "s", email: "a@x", email_verified: false };
    expect(withUserinfo(idToken, { sub: "s", email: "a@x", email_verified: true })).toEqual(
      idToken,
    );
  });

  it("does not carry a verification about another email than the ID token's", () => {
    const claims = withUserinfo(
      { sub: "s", email: "a@x" },
      { sub: "s", email: "b@x", email_verified: true },
    );
    expect(emailIsVerified(claims)).toBe(false);
    expect(claims.email).toBe("a@x");
  });

  it("takes the verification from userinfo when the email comes from there", () => {
    const claims = withUserinfo({ sub: "s", email_verified: true }, { sub: "s", email: "a@x" });
    expect(claims.email).toBe("a@x");
    expect(emailIsVerified(claims)).toBe(false);
  });
});
