// Runs `vc` in this process through main() — the binary's code path without a process start per call —
// with stdout and stderr captured and the working directory, environment and exit code restored after.
import { main } from "../../src/cli/main.js";

export interface VcRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `vc <args>`; `NO_COLOR=1` unless `env` says otherwise. */
export async function runVc(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<VcRun> {
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const savedCode = process.exitCode;
  const out = process.stdout.write;
  const err = process.stderr.write;
  let stdout = "";
  let stderr = "";
  Object.assign(process.env, { NO_COLOR: "1", ...opts.env });
  if (opts.cwd) process.chdir(opts.cwd);
  process.stdout.write = ((chunk: string | Uint8Array) => (
    (stdout += String(chunk)), true
  )) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (
    (stderr += String(chunk)), true
  )) as typeof process.stderr.write;
  try {
    process.exitCode = undefined;
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exitCode = savedCode;
    process.chdir(savedCwd);
    for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
    Object.assign(process.env, savedEnv);
  }
}
