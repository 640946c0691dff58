// Finds host objects rendered twice under one identity (names with "-x-" can translate alike): an error, never applied.
import { type KubeObject, describeRef } from "../kube/object.js";
import type { Diagnostic } from "../model/diagnostic.js";
import { ANNOTATIONS } from "../translate/index.js";

function origin(o: KubeObject): string {
  const a = o.metadata.annotations ?? {};
  const name = a[ANNOTATIONS.objectName];
  const ns = a[ANNOTATIONS.objectNamespace];
  const file = a[ANNOTATIONS.sourceFile] ?? "";
  return name !== undefined ? `${ns}/${name} in ${file}` : file;
}

/** One error per object whose identity (apiVersion, kind, namespace, name) an earlier object already has. */
export function findCollisions(objects: readonly KubeObject[]): Diagnostic[] {
  const seen = new Map<string, KubeObject>();
  const out: Diagnostic[] = [];
  for (const o of objects) {
    const key = `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    const first = seen.get(key);
    if (!first) {
      seen.set(key, o);
      continue;
    }
    out.push({
      file: o.metadata.annotations?.[ANNOTATIONS.sourceFile] ?? "",
      line: 0,
      col: 0,
      severity: "error",
      code: "host-name-collision",
      message:
        `${describeRef(o)} would be rendered twice: from ${origin(first)} and from ${origin(o)}; rename one ` +
        `of them (names or namespaces containing "-x-" can translate to the same host name)`,
    });
  }
  return out;
}
