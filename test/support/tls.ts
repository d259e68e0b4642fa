import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A throw-away self-signed certificate for `host` (P-256, one day), made with openssl. */
export function selfSignedCertificate(host: string): { cert: string; key: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "north-tls-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        path.join(dir, "key.pem"),
        "-out",
        path.join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        `/CN=${host}`,
        "-addext",
        `subjectAltName=DNS:${host}`,
      ],
      { stdio: "ignore" },
    );
    return {
      cert: readFileSync(path.join(dir, "cert.pem"), "utf8"),
      key: readFileSync(path.join(dir, "key.pem"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
