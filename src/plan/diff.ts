// Compares normalised objects and writes the unified diff of one object as YAML (sorted keys, secrets masked).
import { structuredPatch } from "diff";
import { dump } from "js-yaml";
import { describeRef, type KubeObject, type ObjectRef } from "../kube/object.js";
import { maskCredentialsPair, maskSecretPair } from "./mask.js";
import { isPlainObject } from "./normalize.js";

/** Structural equality of JSON values (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

export function toYaml(obj: unknown): string {
  return dump(obj, { sortKeys: true, lineWidth: -1, noRefs: true });
}

/**
 * Unified diff from `live` to `desired` (either may be absent: create or delete), both already normalised.
 * Secret values are masked; empty string when they print the same.
 */
export function objectDiff(
  ref: ObjectRef,
  desired: KubeObject | undefined,
  live: KubeObject | undefined,
  context = 3,
): string {
  const [d, l] = maskCredentialsPair(...maskSecretPair(desired, live));
  const before = l ? toYaml(l) : "";
  const after = d ? toYaml(d) : "";
  if (before === after) return "";
  const name = describeRef(ref);
  // A create or a delete is the whole object on one side: no need to search for a diff.
  if (!l || !d) return wholeObjectDiff(name, l ? before : after, l ? "-" : "+");
  const patch = structuredPatch(`live/${name}`, `desired/${name}`, before, after, undefined, undefined, { context });
  if (patch.hunks.length === 0) return "";
  const lines = [`--- ${l ? `live/${name}` : "/dev/null"}`, `+++ ${d ? `desired/${name}` : "/dev/null"}`];
  for (const h of patch.hunks) {
    lines.push(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`);
    for (const line of h.lines) if (!line.startsWith("\\")) lines.push(line);
  }
  return `${lines.join("\n")}\n`;
}

/** A hunk range as GNU diff prints it: an empty side starts at the line before (`-0,0`). */
function range(start: number, lines: number): string {
  return `${lines === 0 ? start - 1 : start},${lines}`;
}

function wholeObjectDiff(name: string, text: string, sign: "+" | "-"): string {
  const lines = text.replace(/\n$/, "").split("\n");
  const header =
    sign === "+"
      ? ["--- /dev/null", `+++ desired/${name}`, `@@ -0,0 +1,${lines.length} @@`]
      : [`--- live/${name}`, "+++ /dev/null", `@@ -1,${lines.length} +0,0 @@`];
  return `${[...header, ...lines.map((l) => sign + l)].join("\n")}\n`;
}
