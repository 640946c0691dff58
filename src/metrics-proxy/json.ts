// Reading parsed JSON (an API server's answers, a kubeconfig document) without trusting its shape.

export type JsonRecord = Record<string, unknown>;

/** `v` when it is a JSON object (not null, not a list), else undefined. */
export function asRecord(v: unknown): JsonRecord | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as JsonRecord) : undefined;
}

/** The value at `path` inside `v`, or undefined when a step is missing or not an object. */
export function at(v: unknown, ...path: string[]): unknown {
  let cur = v;
  for (const key of path) {
    const r = asRecord(cur);
    if (!r) return undefined;
    cur = r[key];
  }
  return cur;
}

/** The string at `path` inside `v`, or undefined. */
export function stringAt(v: unknown, ...path: string[]): string | undefined {
  const x = at(v, ...path);
  return typeof x === "string" ? x : undefined;
}
