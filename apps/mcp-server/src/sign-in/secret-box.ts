import { symmetricDecrypt, symmetricEncrypt } from "better-auth/crypto";

/**
 * Encryption at rest for IdP client secrets (SPEC §3a), keyed by NORTH_SECRET_KEY — the same key
 * the authorization server encrypts its signing keys with. The cipher is better-auth's
 * (XChaCha20-Poly1305 from @noble/ciphers), not ours.
 */
export function createSecretBox(key: string) {
  if (key.length < 32) throw new TypeError("NORTH_SECRET_KEY must be at least 32 characters");
  return {
    encrypt: (data: string) => symmetricEncrypt({ key, data }),
    decrypt: (data: string) => symmetricDecrypt({ key, data }),
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;
