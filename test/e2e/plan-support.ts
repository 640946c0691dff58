// Shared by the plan e2e tests: the example fleet on a real API server, kubectl, and a garbage-collector stand-in.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kubectl as runKubectl, type KubectlResult } from "../support/kubectl.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

export { exampleRepo, runVc };

export interface Host {
  kubeconfigPath: string;
}

/** kubectl against the host; throws with its output when it fails. */
export async function kubectl(host: Host, args: string[], input?: string): Promise<string> {
  const r: KubectlResult = await runKubectl(host, args, { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

export async function getJson(host: Host, args: string[]): Promise<any> {
  return JSON.parse(await kubectl(host, ["get", ...args, "-o", "json", "--show-managed-fields"]));
}

/** `vc <cmd> <repo> --target kube` against the host. */
export function vcOn(host: Host, cmd: "apply" | "diff", repo: string, ...extra: string[]) {
  return runVc([cmd, repo, "--target", "kube", "--kubeconfig", host.kubeconfigPath, ...extra]);
}

/** Rewrites a file of the repository with a string replacement that must match. */
export function editRepo(repo: string, file: string, from: string, to: string): void {
  const p = join(repo, file);
  const text = readFileSync(p, "utf8");
  if (!text.includes(from)) throw new Error(`${file} has no "${from}"`);
  writeFileSync(p, text.replace(from, to));
}

/**
 * The real server here runs no controller-manager, so nothing removes the `orphan` finalizer an orphan delete
 * adds: this stands in for the garbage collector, removing it from the named StatefulSet once it is being deleted.
 * `finalizers` records what the deleting object carried (["orphan"] for a delete with propagationPolicy=Orphan).
 */
export function garbageCollector(
  host: Host,
  namespace: string,
  name: string,
): { finalizers: string[]; stop(): Promise<void> } {
  let stopped = false;
  const finalizers: string[] = [];
  const loop = (async () => {
    while (!stopped) {
      const r = await runKubectl(host, [
        "-n",
        namespace,
        "get",
        "statefulset",
        name,
        "-o",
        "jsonpath={.metadata.deletionTimestamp} {.metadata.finalizers}",
      ]);
      const [deleting, list] = r.stdout.trim().split(" ");
      if (r.code === 0 && deleting) {
        if (list) finalizers.push(...(JSON.parse(list) as string[]));
        await runKubectl(host, [
          "-n",
          namespace,
          "patch",
          "statefulset",
          name,
          "--type=merge",
          "-p",
          '{"metadata":{"finalizers":null}}',
        ]);
      }
      await new Promise((res) => setTimeout(res, 200));
    }
  })();
  return {
    finalizers,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

const TOTAL = /^(\d+) created, (\d+) updated, (\d+) deleted, (\d+) unchanged, (\d+) failed, (\d+) skipped/m;

/** The closing totals of `vc apply`: [created, updated, deleted, unchanged, failed, skipped]. */
export function totals(stdout: string): number[] {
  const last = stdout.trimEnd().split("\n").at(-1)!;
  const m = TOTAL.exec(last);
  if (!m) throw new Error(`no totals in: ${last}`);
  return m.slice(1).map(Number);
}
