// A throwaway self-signed certificate for 127.0.0.1 (openssl CLI), for tests where kubectl must send a bearer token: it
// never does over plain HTTP.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface Certificate {
  cert: string;
  key: string;
}

export function selfSignedCertificate(dir: string): Certificate {
  const key = join(dir, "tls.key");
  const cert = join(dir, "tls.crt");
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
      key,
      "-out",
      cert,
      "-days",
      "2",
      "-subj",
      "/CN=kube-test-server",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stdio: "pipe" },
  );
  return { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
}
