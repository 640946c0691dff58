// Writes a cluster folder that fills a folder budget (files, bytes and objects at once), or passes it by one, for the
// budget tests and the memory bench.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FolderBudget } from "../../src/repo/budget.js";

export interface WrittenFolder {
  files: number;
  bytes: number;
  objects: number;
}

/** One VirtualService of about `size` bytes: routes of real content, then a comment for the last few bytes. */
function virtualService(name: string, size: number): string {
  let doc =
    `---\napiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: ` +
    `${name}\nspec:\n  hosts:\n    - ${name}\n  http:\n`;
  const route = (i: number) =>
    `    - match:\n        - uri:\n            prefix: /p${i}\n      route:\n        - destination:\n            ` +
    `host: ${name}\n            port:\n              number: 80\n`;
  for (let i = 0; doc.length + route(i).length + 4 <= size; i++) doc += route(i);
  if (!doc.includes("match")) doc += route(0);
  const pad = size - doc.length - 2;
  if (pad > 0) doc += `#${"x".repeat(pad)}\n`;
  return doc;
}

/**
 * Writes `clusters/<name>/` under `root`: values.yaml and `budget.files - 1` mesh files holding `budget.objects`
 * VirtualServices that together come to `budget.bytes` (all three limits met exactly). `past` passes one of them
 * by one: one more document, one more byte, or one more file.
 */
export function writeBudgetFolder(
  root: string,
  name: string,
  budget: FolderBudget,
  past?: keyof FolderBudget,
): WrittenFolder {
  const dir = join(root, "clusters", name);
  mkdirSync(join(dir, "mesh"), { recursive: true });
  const values = "integrations:\n  mesh:\n    enabled: true\n";
  writeFileSync(join(dir, "values.yaml"), values);
  const meshFiles = Math.max(1, budget.files - 1);
  const objects = budget.objects + (past === "objects" ? 1 : 0);
  const bytes = budget.bytes - values.length + (past === "bytes" ? 1 : 0);
  let written = values.length;
  let made = 0;
  for (let f = 0; f < meshFiles; f++) {
    const count = Math.floor(objects / meshFiles) + (f < objects % meshFiles ? 1 : 0);
    let text = "";
    for (let i = 0; i < count; i++) {
      const left = bytes - (written - values.length) - text.length;
      const size = Math.floor(left / (objects - made));
      text += virtualService(`vs-${f}-${i}`, size);
      made++;
    }
    writeFileSync(join(dir, "mesh", `m${String(f).padStart(4, "0")}.yaml`), text);
    written += text.length;
  }
  let files = meshFiles + 1;
  if (past === "files") {
    writeFileSync(join(dir, "mesh", "zz-extra.yaml"), "");
    files++;
  }
  return { files, bytes: written, objects };
}

/**
 * Writes `clusters/<name>/` under `root` whose mesh files repeat long strings through aliases: `files` files of `docs`
 * VirtualServices, each anchoring one string of `anchorBytes` characters and aliasing it `aliases` times (issue #38's
 * folder is 10 × 125 documents, 1,000 characters, 99 aliases: 2 MiB of text that expands to over 100 MiB).
 */
export function writeAliasFolder(
  root: string,
  name: string,
  shape: { files: number; docs: number; anchorBytes: number; aliases: number },
): WrittenFolder {
  const dir = join(root, "clusters", name);
  mkdirSync(join(dir, "mesh"), { recursive: true });
  const values = "integrations:\n  mesh:\n    enabled: true\n";
  writeFileSync(join(dir, "values.yaml"), values);
  let bytes = values.length;
  for (let f = 0; f < shape.files; f++) {
    let text = "";
    for (let d = 0; d < shape.docs; d++) {
      const vs = `vs-${f}-${d}`;
      const repeats = Array.from({ length: shape.aliases }, () => "*s").join(", ");
      text +=
        `---\napiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: ${vs}\n` +
        `  annotations: {note: &s "${"y".repeat(shape.anchorBytes)}"}\n  finalizers: [${repeats}]\n` +
        `spec:\n  hosts: [${vs}]\n  http:\n    - route:\n        - destination: {host: ${vs}}\n`;
    }
    writeFileSync(join(dir, "mesh", `a${f}.yaml`), text);
    bytes += text.length;
  }
  return { files: shape.files + 1, bytes, objects: shape.files * shape.docs };
}
