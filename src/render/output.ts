// Serialisations of rendered objects: a multi-document YAML stream, a JSON List, and one file path per object.
import { dump } from "js-yaml";
import type { KubeObject } from "../kube/object.js";

/** Folder of cluster-scoped objects under `--out` (a namespace never starts with "_"). */
const CLUSTER_SCOPED_DIR = "_cluster";

export function toYamlDocument(obj: KubeObject): string {
  return dump(obj, { sortKeys: true, noRefs: true, lineWidth: -1 });
}

/** Documents separated by `---` lines; empty text for no objects. */
export function toYamlStream(objects: readonly KubeObject[]): string {
  return objects.map((o) => `---\n${toYamlDocument(o)}`).join("");
}

/** A `v1` List holding the objects, two-space indented. */
export function toJsonList(objects: readonly KubeObject[]): string {
  return `${JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }, null, 2)}\n`;
}

/**
 * Writes the same bytes as toJsonList, a chunk of objects at a time: a whole fleet's List is never held at once.
 * `write` receives each piece; `end()` closes the List.
 */
export class JsonListWriter {
  #count = 0;
  constructor(private readonly write: (text: string) => void) {
    write('{\n  "apiVersion": "v1",\n  "kind": "List",\n  "items": [');
  }
  add(objects: readonly KubeObject[]): void {
    for (const o of objects)
      this.write(`${this.#count++ === 0 ? "\n" : ",\n"}${JSON.stringify(o, null, 2).replace(/^/gm, "    ")}`);
  }
  end(): void {
    this.write(this.#count === 0 ? "]\n}\n" : "\n  ]\n}\n");
  }
}

const SEGMENT = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function segment(value: string, what: string): string {
  if (!SEGMENT.test(value) || value.includes("..")) throw new Error(`cannot use ${what} "${value}" as a file name`);
  return value;
}

/** `<namespace>/<kind>/<name>.yaml`, cluster-scoped objects under `_cluster/<kind>/<name>.yaml`; kind in lower case. */
export function objectFilePath(obj: KubeObject): string {
  const ns = obj.metadata.namespace ? segment(obj.metadata.namespace, "namespace") : CLUSTER_SCOPED_DIR;
  return `${ns}/${segment(obj.kind.toLowerCase(), "kind")}/${segment(obj.metadata.name, "name")}.yaml`;
}
