// API discovery of the host (GET /apis, /apis/<group>/<version>): which kinds it serves, cached for a short while.
import { KubeApiError, type KubeClient } from "./client.js";

interface Kind {
  apiVersion: string;
  kind: string;
}

interface ResourceList {
  resources?: Array<{ name: string; kind: string }>;
}

interface GroupList {
  groups?: Array<{ name: string; versions?: Array<{ groupVersion: string }> }>;
}

/** How long answers are reused: one run (or one reconcile pass) asks once; a CRD installed later is seen soon after. */
const DISCOVERY_TTL_MS = 30_000;

/**
 * Groups every kube-apiserver serves: the core group, the unsuffixed built-in groups and `*.k8s.io` (a CRD may not
 * claim a k8s.io group without Kubernetes API review). Only other groups (CRDs, aggregated APIs) are asked about.
 */
const BUILT_IN_GROUPS = new Set(["apps", "batch", "policy", "autoscaling", "extensions"]);

function isBuiltIn(apiVersion: string): boolean {
  const slash = apiVersion.indexOf("/");
  if (slash < 0) return true;
  const group = apiVersion.slice(0, slash);
  return BUILT_IN_GROUPS.has(group) || group.endsWith(".k8s.io");
}

export class Discovery {
  private groups?: { at: number; value: Promise<Set<string>> };
  private readonly versions = new Map<string, { at: number; value: Promise<Set<string> | undefined> }>();

  constructor(
    private readonly client: KubeClient,
    private readonly ttlMs = DISCOVERY_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The kinds of the list the host does not serve, in the order given. Built-in kinds are taken as served (no request).
   */
  async missing(kinds: readonly Kind[]): Promise<Kind[]> {
    const out: Kind[] = [];
    for (const k of kinds) {
      if (isBuiltIn(k.apiVersion)) continue;
      const served = await this.groupVersion(k.apiVersion);
      if (!served?.has(k.kind)) out.push(k);
    }
    return out;
  }

  /** Whether the host serves a kind in a group version, built-in groups included (asked, never assumed). */
  async serves(apiVersion: string, kind: string): Promise<boolean> {
    return (await this.groupVersion(apiVersion))?.has(kind) ?? false;
  }

  /** The kinds served in a group version, or undefined when the host does not serve it. */
  private async groupVersion(gv: string): Promise<Set<string> | undefined> {
    if (!(await this.groupVersions()).has(gv)) return undefined;
    return this.cached(this.versions, gv, async () => {
      try {
        const list = await this.client.request<ResourceList>("GET", `/apis/${gv}`);
        return new Set((list.resources ?? []).filter((r) => !r.name.includes("/")).map((r) => r.kind));
      } catch (err) {
        if (err instanceof KubeApiError && (err.status === 404 || err.status === 503)) return undefined;
        throw err;
      }
    });
  }

  private async groupVersions(): Promise<Set<string>> {
    if (!this.groups || this.now() - this.groups.at > this.ttlMs) {
      const value = this.client
        .request<GroupList>("GET", "/apis")
        .then((list) => new Set((list.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => v.groupVersion))));
      this.groups = { at: this.now(), value };
      value.catch(() => (this.groups = undefined));
    }
    return this.groups.value;
  }

  private cached<T>(
    map: Map<string, { at: number; value: Promise<T> }>,
    key: string,
    load: () => Promise<T>,
  ): Promise<T> {
    const hit = map.get(key);
    if (hit && this.now() - hit.at <= this.ttlMs) return hit.value;
    const value = load();
    map.set(key, { at: this.now(), value });
    value.catch(() => map.delete(key));
    return value;
  }
}
