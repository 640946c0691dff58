// Shared helpers of the operations tests: run the vc CLI as a process, run kubectl, make client certificates.
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runVc } from "../support/vc.js";

const ROOT = resolve(import.meta.dirname, "../..");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(
  file: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {},
): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      file,
      args,
      { cwd: opts.cwd ?? ROOT, env: { ...process.env, NO_COLOR: "1", ...opts.env }, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === "number"
            ? (err as { code: number }).code
            : 2
          : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/** Runs `vc <args>` from the sources in a child process (the real entry point, slow to start). */
export function vcProcess(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {},
): Promise<Run> {
  return run(process.execPath, ["--import", "tsx", join(ROOT, "src/cli/main.ts"), ...args], opts);
}

/** `vc <args>` in this process (see test/support/vc.ts). */
export const vc = runVc;

/** Runs the real kubectl. */
export function kubectl(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return run("kubectl", args, { env });
}

export function tempDir(prefix = "vc-ops-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A self-signed client certificate and key (PEM) valid for `days`, made with openssl. */
export function clientCert(days: number, cn = "admin"): { cert: string; key: string } {
  const dir = tempDir("vc-cert-");
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
      join(dir, "k.pem"),
      "-out",
      join(dir, "c.pem"),
      "-days",
      String(days),
      "-subj",
      `/CN=${cn}/O=system:masters`,
    ],
    { stdio: "ignore" },
  );
  return { cert: readFileSync(join(dir, "c.pem"), "utf8"), key: readFileSync(join(dir, "k.pem"), "utf8") };
}

export const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
