// Server-side Tables (`Accept: ...;as=Table`) for metrics objects, as the upstream metrics server prints them in
// `kubectl get`.
import { asRecord, at, stringAt, type JsonRecord } from "./json.js";
import { RawJson } from "./serialize.js";

/** True when the client asked for a meta.k8s.io Table (kubectl get does). */
export function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && /;\s*as=Table/.test(accept);
}

const BINARY: Array<[string, number]> = [
  ["Ei", 2 ** 60],
  ["Pi", 2 ** 50],
  ["Ti", 2 ** 40],
  ["Gi", 2 ** 30],
  ["Mi", 2 ** 20],
  ["Ki", 2 ** 10],
];
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The value of a Kubernetes quantity (`250m`, `1.5`, `128Mi`, `1e3`); NaN when malformed. */
export function quantityValue(q: string): number {
  const m = /^([+-]?\d+(?:\.\d+)?|[+-]?\.\d+)(Ei|Pi|Ti|Gi|Mi|Ki|[numkMGTPE]|[eE][+-]?\d+)?$/.exec(q.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  const suffix = m[2] ?? "";
  if (/^[eE]/.test(suffix)) return n * 10 ** Number(suffix.slice(1));
  const bin = BINARY.find(([s]) => s === suffix);
  return bin ? n * bin[1] : n * DECIMAL[suffix]!;
}

/** CPU in the metrics server's style: millicores, or nanocores when not whole millicores. */
export function formatCpu(cores: number): string {
  const nano = Math.round(cores * 1e9);
  return nano % 1e6 === 0 ? `${nano / 1e6}m` : `${nano}n`;
}

/** Memory in the largest binary unit that divides it exactly, else bytes. */
export function formatMemory(bytes: number): string {
  const b = Math.round(bytes);
  for (const [s, v] of BINARY) if (b !== 0 && b % v === 0) return `${b / v}${s}`;
  return String(b);
}

const COLUMNS = [
  { name: "Name", type: "string", format: "name", description: "Name must be unique within a namespace.", priority: 0 },
  { name: "CPU", type: "string", format: "", description: "CPU consumption", priority: 0 },
  { name: "Memory", type: "string", format: "", description: "Memory consumption", priority: 0 },
  { name: "Window", type: "string", format: "", description: "Time window of the usage figures", priority: 0 },
];

function usageOf(obj: JsonRecord): { cpu: number; memory: number } {
  const containers = obj.containers;
  const usages = Array.isArray(containers)
    ? containers.map((c) => asRecord(at(c, "usage")) ?? {})
    : [asRecord(obj.usage) ?? {}];
  let cpu = 0;
  let memory = 0;
  for (const u of usages) {
    cpu += typeof u.cpu === "string" ? quantityValue(u.cpu) || 0 : 0;
    memory += typeof u.memory === "string" ? quantityValue(u.memory) || 0 : 0;
  }
  return { cpu, memory };
}

/** A PodMetrics/NodeMetrics object or list (object or RawJson) as a Table with CPU, memory and window. */
export function toTable(body: unknown): Record<string, unknown> {
  const obj = asRecord(body instanceof RawJson ? JSON.parse(body.json) : body) ?? {};
  const items = (Array.isArray(obj.items) ? obj.items : [obj]).map((i) => asRecord(i) ?? {});
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: {},
    columnDefinitions: COLUMNS,
    rows: items.map((i) => {
      const u = usageOf(i);
      return {
        cells: [stringAt(i, "metadata", "name") ?? "", formatCpu(u.cpu), formatMemory(u.memory), i.window ?? ""],
        object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: i.metadata },
      };
    }),
  };
}
