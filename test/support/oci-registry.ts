// A real OCI registry for tests: Debian's docker-registry on a loopback port, anonymous, htpasswd (basic) or token
// auth.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createSign, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dump } from "js-yaml";
import { findExecutable, freePort, requireOrSkip } from "./requires.js";

// VC_TEST_DOCKER_REGISTRY names another binary (or a missing one, to see the skip rule at work).
const BINARY = process.env.VC_TEST_DOCKER_REGISTRY ?? "/usr/bin/docker-registry";

export interface RegistryOptions {
  /**
   * `none` (anonymous), `basic` (htpasswd) or `token` (bearer tokens from a token service answering basic credentials).
   */
  auth?: "none" | "basic" | "token";
  /** The one user of the basic and token modes. */
  username?: string;
  password?: string;
}

export interface TestRegistry {
  /** `127.0.0.1:<port>`, as written in references. */
  host: string;
  /** Requests the token service received (token mode), as `scope` values. */
  tokenScopes: string[];
  close(): Promise<void>;
}

/** In a mocha `before` hook of a suite that needs the registry: skipped with how to install it, failed in CI. */
export function requireRegistry(ctx: Mocha.Context): void {
  requireOrSkip(
    ctx,
    findExecutable(BINARY) ? undefined : "docker-registry",
    "install Debian's docker-registry package (apt-get install docker-registry)",
  );
}

const BCRYPT_ALPHABET = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A bcrypt hash (the only htpasswd format the registry accepts) through the system crypt(3) via perl. */
function bcrypt(password: string): string {
  const salt = Array.from(randomBytes(22), (b) => BCRYPT_ALPHABET[b % 64]).join("");
  return execFileSync("perl", ["-e", "print crypt($ARGV[0], $ARGV[1])", password, `$2b$05$${salt}`], {
    encoding: "utf8",
  });
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString("base64url");
}

/** A token service: checks basic credentials, signs an RS256 JWT carrying the certificate in `x5c`. */
async function startTokenService(
  dir: string,
  opts: Required<Pick<RegistryOptions, "username" | "password">>,
  scopes: string[],
) {
  const key = join(dir, "token.key");
  const cert = join(dir, "token.crt");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=vc-test-token",
    ],
    { stdio: "ignore" },
  );
  const keyPem = readFileSync(key, "utf8");
  const der = execFileSync("openssl", ["x509", "-in", cert, "-outform", "DER"]);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const scope = url.searchParams.get("scope") ?? "";
    scopes.push(scope);
    const expected = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString("base64")}`;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { "Content-Type": "application/json" }).end(JSON.stringify({ details: "bad credentials" }));
      return;
    }
    const access = scope
      ? [{ type: scope.split(":")[0], name: scope.split(":")[1], actions: (scope.split(":")[2] ?? "").split(",") }]
      : [];
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", x5c: [der.toString("base64")] }));
    const claims = b64url(
      JSON.stringify({
        iss: "vc-test",
        sub: opts.username,
        aud: "vc-test-registry",
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomBytes(8).toString("hex"),
        access,
      }),
    );
    const signature = createSign("RSA-SHA256").update(`${header}.${claims}`).sign(keyPem);
    res
      .writeHead(200, { "Content-Type": "application/json" })
      .end(JSON.stringify({ token: `${header}.${claims}.${b64url(signature)}` }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, cert, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token` };
}

export async function startRegistry(options: RegistryOptions = {}): Promise<TestRegistry> {
  const mode = options.auth ?? "none";
  const creds = { username: options.username ?? "backup", password: options.password ?? "s3cret-registry-pass" };
  const dir = mkdtempSync(join(tmpdir(), "vc-registry-"));
  const port = await freePort();
  const tokenScopes: string[] = [];
  let token: Awaited<ReturnType<typeof startTokenService>> | undefined;
  let auth: Record<string, unknown> | undefined;
  if (mode === "basic") {
    writeFileSync(join(dir, "htpasswd"), `${creds.username}:${bcrypt(creds.password)}\n`);
    auth = { htpasswd: { realm: "vc-test", path: join(dir, "htpasswd") } };
  } else if (mode === "token") {
    token = await startTokenService(dir, creds, tokenScopes);
    auth = { token: { realm: token.url, service: "vc-test-registry", issuer: "vc-test", rootcertbundle: token.cert } };
  }
  const config = {
    version: 0.1,
    log: { level: "error", accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: join(dir, "data") }, delete: { enabled: true } },
    http: { addr: `127.0.0.1:${port}`, secret: randomBytes(16).toString("hex") },
    ...(auth ? { auth } : {}),
  };
  writeFileSync(join(dir, "config.yml"), dump(config));
  const child: ChildProcess = spawn(BINARY, ["serve", join(dir, "config.yml")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += String(d)));
  // Not installed: say how to get it instead of an unhandled spawn error.
  child.on("error", (err) => (stderr += `${err.message} (install it: apt-get install docker-registry)`));
  const close = async () => {
    if (child.exitCode === null && child.pid !== undefined) {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    }
    if (token) await new Promise((r) => token!.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.pid === undefined) {
      await close();
      throw new Error(`docker-registry exited: ${stderr}`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v2/`);
      await res.arrayBuffer();
      if (res.status === 200 || res.status === 401) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await close();
      throw new Error(`docker-registry did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { host: `127.0.0.1:${port}`, tokenScopes, close };
}
