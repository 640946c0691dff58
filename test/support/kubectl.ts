// Runs the real kubectl (on PATH, or $KUBECTL) against a test server through a kubeconfig, with its own discovery
// cache.
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  /** Defaults to the server's admin kubeconfig. */
  kubeconfig?: string;
  /** Text fed to stdin (for `-f -`). */
  input?: string;
  timeoutMs?: number;
  env?: Record<string, string>;
}

/** Runs `kubectl <args>`; resolves with the exit code and output (never rejects on a non-zero exit). */
export function kubectl(
  server: { kubeconfigPath: string },
  args: string[],
  opts: KubectlOptions = {},
): Promise<KubectlResult> {
  const kubeconfig = opts.kubeconfig ?? server.kubeconfigPath;
  const cacheDir = join(dirname(server.kubeconfigPath), "kubectl-cache");
  mkdirSync(cacheDir, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.env.KUBECTL ?? "kubectl",
      args,
      {
        timeout: opts.timeoutMs ?? 15_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: cacheDir, NO_COLOR: "1", ...(opts.env ?? {}) },
      },
      (err, stdout, stderr) => {
        if (err && typeof (err as NodeJS.ErrnoException).code === "string")
          return reject(new Error(`cannot run kubectl: ${err.message}`));
        const code = err
          ? typeof (err as { code?: unknown }).code === "number"
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else child.stdin?.end();
  });
}
