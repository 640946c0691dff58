// Test helper: writes a throw-away repository from a map of relative paths to contents.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const made: string[] = [];

export function makeRepo(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), "vc-repo-"));
  made.push(root);
  mkdirSync(join(root, "clusters"), { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, ...rel.split("/"));
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  return root;
}

export function cleanupRepos(): void {
  for (const r of made.splice(0)) rmSync(r, { recursive: true, force: true });
}

export const VS = (name: string, ns?: string, extra = ""): string => `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: ${name}
${ns ? `  namespace: ${ns}\n` : ""}spec:
  hosts:
    - ${name}
  http:
    - route:
        - destination:
            host: ${name}
${extra}`;

export const MESH_ON = "integrations:\n  mesh:\n    enabled: true\n";

/** A VirtualService document of about 285 bytes carrying a small alias bomb: about 7,600 nodes once expanded. */
export function smallBomb(i: number): string {
  const list = (item: string, n: number): string => `[${Array(n).fill(item).join(",")}]`;
  return `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata: {name: vs${i}}
spec:
  a: &a ${list("x", 20)}
  b: &b ${list("*a", 20)}
  c: ${list("*b", 17)}
`;
}
