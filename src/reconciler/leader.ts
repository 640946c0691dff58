// Leader election over a coordination.k8s.io/v1 Lease, as client-go does it: acquire, renew, take over an expired
// lease.
import type { KubeObject } from "../kube/object.js";
import { ANNOTATIONS } from "../translate/keys.js";
import { KubeApiError, type KubeClient } from "../host/client.js";
import type { Logger } from "../model/log.js";
import { silentLogger } from "../model/log.js";
import { PlatformNamespaceError, verifyPlatformNamespace } from "../records/platform-namespace.js";

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface LeaseObject extends KubeObject {
  spec?: LeaseSpec;
}

export interface ElectorOptions {
  client: KubeClient;
  namespace: string;
  /** Lease name (default `vc-reconciler`). */
  name?: string;
  /** This replica's identity (pod name). */
  identity: string;
  /** How long a lease is valid without renewal (default 15 s). */
  leaseDurationMs?: number;
  /** How often to try to acquire or renew (default 2 s). */
  retryPeriodMs?: number;
  /** Stop leading when a renewal has not succeeded for this long (default 10 s). */
  renewDeadlineMs?: number;
  now?: () => number;
  logger?: Logger;
  onChange?: (leading: boolean) => void;
  /** Called on the leader when a standby handed over a webhook push (see PUSH_ANNOTATION). */
  onPush?: (commit: string | undefined) => void;
}

/**
 * Annotation on the Lease through which a standby replica that received a webhook hands the push to the
 * leader (a Service sends webhooks to any ready replica); the leader sees it at its next renewal.
 */
const PUSH_ANNOTATION = ANNOTATIONS.lastPush;

/** MicroTime as the API server writes it: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}

export class LeaderElector {
  readonly name: string;
  readonly #o: ElectorOptions;
  readonly #durationMs: number;
  readonly #now: () => number;
  readonly #log: Logger;
  #leading = false;
  #lastRenew = 0;
  /** The record last seen and when we saw it change (local clock: immune to skew between replicas). */
  #observed?: { key: string; at: number };
  #timer?: NodeJS.Timeout;
  #stopped = false;
  #lastPush?: string;
  /** The lease namespace was verified a platform namespace (records/platform-namespace.ts) before the first Lease. */
  #verified = false;

  constructor(opts: ElectorOptions) {
    this.#o = opts;
    this.name = opts.name ?? "vc-reconciler";
    this.#durationMs = opts.leaseDurationMs ?? 15_000;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.logger ?? silentLogger;
  }

  /** True while this replica holds the lease and renewed it within the renew deadline. */
  get isLeader(): boolean {
    if (!this.#leading) return false;
    if (this.#now() - this.#lastRenew > (this.#o.renewDeadlineMs ?? 10_000)) {
      this.#set(false);
      return false;
    }
    return true;
  }

  /**
   * Until when this replica may write (epoch ms): its last successful renewal plus the renew deadline while it leads,
   * else a moment already past. Every write of a leading reconciler is fenced by it (sinks/kube/target.ts fence).
   */
  writeDeadline(): number {
    return this.isLeader ? this.#lastRenew + (this.#o.renewDeadlineMs ?? 10_000) : 0;
  }

  /** The Lease (`namespace/name`) and this replica's identity, as its writes name them. */
  get holder(): { lease: string; identity: string } {
    return { lease: `${this.#o.namespace}/${this.name}`, identity: this.#o.identity };
  }

  /** One attempt to acquire or renew the lease; returns whether we lead afterwards. */
  async tick(): Promise<boolean> {
    const now = this.#now();
    const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases/${encodeURIComponent(this.name)}`;
    try {
      if (!this.#verified) {
        await verifyPlatformNamespace(this.#o.client, this.#o.namespace, "Leases", { create: true });
        this.#verified = true;
      }
      let lease: LeaseObject | undefined;
      try {
        lease = await this.#o.client.request<LeaseObject>("GET", path);
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 404)) throw err;
      }
      const spec = lease?.spec ?? {};
      const push = lease?.metadata.annotations?.[PUSH_ANNOTATION] ?? "";
      const firstLook = this.#lastPush === undefined;
      const pushSeen = this.#lastPush;
      this.#lastPush = push;
      const key = `${spec.holderIdentity ?? ""}|${spec.renewTime ?? ""}|${lease?.metadata.resourceVersion ?? ""}`;
      if (!this.#observed || this.#observed.key !== key) this.#observed = { key, at: now };
      const mine = spec.holderIdentity === this.#o.identity;
      const expired =
        !spec.holderIdentity || now - this.#observed.at > (spec.leaseDurationSeconds ?? this.#durationMs / 1000) * 1000;
      if (lease && !mine && !expired) {
        this.#set(false);
        return false;
      }
      const next: LeaseSpec = {
        holderIdentity: this.#o.identity,
        leaseDurationSeconds: Math.ceil(this.#durationMs / 1000),
        acquireTime: mine && spec.acquireTime ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (lease && !mine ? 1 : 0),
      };
      if (!lease) {
        await this.#o.client.request("POST", path.slice(0, path.lastIndexOf("/")), {
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name: this.name, namespace: this.#o.namespace },
            spec: next,
          },
        });
      } else {
        // PUT with the resourceVersion we read: a concurrent writer makes this a 409 and we lose the race.
        await this.#o.client.request("PUT", path, { body: { ...lease, spec: next } });
      }
      this.#lastRenew = now;
      this.#set(true);
      if (!firstLook && push && push !== pushSeen) this.#o.onPush?.(push.split("@")[0] || undefined);
      return true;
    } catch (err) {
      if (err instanceof PlatformNamespaceError) {
        // Whoever may write a namespace that is not the platform's may hold the Lease: never lead from one.
        this.#log.error("lease namespace refused", { lease: this.name, error: err.message });
        this.#set(false);
        return false;
      }
      const lost = err instanceof KubeApiError && err.status === 409;
      if (!lost) this.#log.warn("lease request failed", { lease: this.name, error: (err as Error).message });
      if (lost) this.#set(false);
      return this.isLeader;
    }
  }

  /** A standby hands a verified webhook push to the leader by annotating the Lease (retried on conflicts). */
  async notifyPush(commit: string | undefined): Promise<void> {
    const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases/${encodeURIComponent(this.name)}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const lease = await this.#o.client.request<LeaseObject>("GET", path);
        const annotations = { ...lease.metadata.annotations, [PUSH_ANNOTATION]: `${commit ?? ""}@${this.#now()}` };
        await this.#o.client.request("PUT", path, { body: { ...lease, metadata: { ...lease.metadata, annotations } } });
        return;
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 409) || attempt >= 5) throw err;
      }
    }
  }

  /** Ticks every retry period until stop(). */
  start(): void {
    this.#stopped = false;
    const loop = async (): Promise<void> => {
      if (this.#stopped) return;
      await this.tick();
      if (!this.#stopped) this.#timer = setTimeout(loop, this.#o.retryPeriodMs ?? 2000);
    };
    void loop();
  }

  /** Stops ticking and, when leading, releases the lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (!this.#leading) return;
    this.#set(false);
    const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases/${encodeURIComponent(this.name)}`;
    try {
      const lease = await this.#o.client.request<LeaseObject>("GET", path);
      if (lease.spec?.holderIdentity === this.#o.identity) {
        await this.#o.client.request("PUT", path, {
          body: { ...lease, spec: { ...lease.spec, holderIdentity: "", renewTime: microTime(this.#now()) } },
        });
      }
    } catch (err) {
      this.#log.warn("lease release failed", { lease: this.name, error: (err as Error).message });
    }
  }

  #set(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    this.#log.info(leading ? "became leader" : "stopped leading", { lease: this.name, identity: this.#o.identity });
    this.#o.onChange?.(leading);
  }
}
