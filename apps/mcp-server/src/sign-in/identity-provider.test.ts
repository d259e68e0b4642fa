import { describe, expect, it } from "vitest";
import { emailIsVerified } from "./identity-provider.ts";

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
