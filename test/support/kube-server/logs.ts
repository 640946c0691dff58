// Pod logs set by the test and served at pods/<name>/log with container, previous, tailLines and limitBytes.
import type { Store } from "./store.js";
import { ApiError, badRequest, notFound } from "./status.js";

export class PodLogs {
  private readonly logs = new Map<string, string>();

  constructor(private readonly store: Store) {}

  set(namespace: string, pod: string, container: string, text: string, opts: { previous?: boolean } = {}): void {
    this.logs.set(`${namespace}/${pod}/${container}/${opts.previous ? "previous" : "current"}`, text);
  }

  /** The log text of a pod's container, with upstream's errors for a missing pod or an ambiguous container. */
  read(namespace: string, pod: string, query: URLSearchParams): string {
    const entry = this.store.get("v1/Pod", namespace, pod);
    if (!entry) throw notFound("pods", "", pod);
    const spec = (entry.obj.spec ?? {}) as {
      containers?: Array<{ name: string }>;
      initContainers?: Array<{ name: string }>;
    };
    const names = (spec.containers ?? []).map((c) => c.name);
    const all = [...names, ...(spec.initContainers ?? []).map((c) => c.name)];
    let container = query.get("container");
    if (!container) {
      if (names.length !== 1) {
        throw badRequest(`a container name must be specified for pod ${pod}, choose one of: [${names.join(" ")}]`);
      }
      container = names[0]!;
    } else if (!all.includes(container)) {
      throw badRequest(`container ${container} is not valid for pod ${pod}`);
    }
    const previous = query.get("previous") === "true";
    const text = this.logs.get(`${namespace}/${pod}/${container}/${previous ? "previous" : "current"}`);
    if (text === undefined) {
      if (previous) throw badRequest(`previous terminated container "${container}" in pod "${pod}" not found`);
      return "";
    }
    let out = text;
    const tail = query.get("tailLines");
    if (tail !== null) {
      const n = Number(tail);
      if (!Number.isInteger(n) || n < 0)
        throw new ApiError(422, `tailLines: Invalid value: ${tail}: must be greater than or equal to 0`, "Invalid");
      const lines = out.endsWith("\n") ? out.slice(0, -1).split("\n") : out.split("\n");
      out = n === 0 ? "" : lines.slice(-n).join("\n") + (out.endsWith("\n") ? "\n" : "");
    }
    const limit = query.get("limitBytes");
    if (limit !== null && Number(limit) > 0) out = Buffer.from(out).subarray(0, Number(limit)).toString("utf8");
    return out;
  }
}
