// The `kube` target: a live host through the kubeconfig; inventory by label-selected LISTs, server-side apply, guarded deletes.
import type { KubeObject } from "../../kube/object.js";
import { refOf } from "../../kube/object.js";
import { MESH_GROUP, RESOURCES, type ResourceType } from "../../kube/resources.js";
import { inventorySelector, LABELS } from "../../translate/keys.js";
import { stripServerFields } from "../../plan/normalize.js";
import type { Target, WriteOptions } from "../types.js";
import { KubeApiError, KubeClient } from "./client.js";
import { Discovery } from "./discovery.js";
import { DEFAULT_RECREATE_WAIT, recreateObject, type RecreateWait } from "./recreate.js";

/** Kinds never in vc's inventory: synced by the syncer (pods, events), read-only, or the reconciler's own (leases). */
const NOT_APPLIED = new Set(["Node", "Pod", "Event", "Lease"]);

/** The kinds vc may have applied, listed to find a cluster's inventory: one LIST each. */
export const INVENTORY_TYPES: readonly ResourceType[] = RESOURCES.filter((r) => !r.readOnly && !NOT_APPLIED.has(r.kind));

/** The kinds that claim public hosts (target/host-claims.ts). */
const CLAIM_TYPES: readonly ResourceType[] = INVENTORY_TYPES.filter((t) => t.group === MESH_GROUP && (t.kind === "Gateway" || t.kind === "VirtualService"));
const isClaimKind = (o: KubeObject): boolean => o.apiVersion.startsWith(`${MESH_GROUP}/`) && (o.kind === "Gateway" || o.kind === "VirtualService");
/** How long read claims are reused when nothing else renews them (a long-running reconciler between full passes). */
const CLAIMS_MAX_AGE_MS = 30_000;

export class KubeTarget implements Target {
  readonly description: string;

  /** How long a recreate waits for the old object to be gone (tests shorten it). */
  recreateWait: RecreateWait = DEFAULT_RECREATE_WAIT;

  private readonly discovery: Discovery;
  private claims: { at: number; objects: Promise<KubeObject[]> } | undefined;

  constructor(readonly client: KubeClient) {
    this.discovery = new Discovery(client);
    this.description = `kube context ${client.contextName} (${client.server})`;
  }

  async listInventory(cluster: string, hostNamespace?: string): Promise<KubeObject[]> {
    const selector = inventorySelector(cluster);
    const lists = await Promise.all(INVENTORY_TYPES.map((t) => this.listKind(t, selector, t.namespaced ? hostNamespace : undefined)));
    return lists.flat();
  }

  /** Objects of every inventory kind matching a label selector, across namespaces (one LIST per kind; unserved kinds hold nothing). */
  async listBySelector(labelSelector: string): Promise<KubeObject[]> {
    return (await Promise.all(INVENTORY_TYPES.map((t) => this.listKind(t, labelSelector)))).flat();
  }

  /**
   * The live claims of public hosts (vc's Gateways and VirtualServices across namespaces): read once and reused until
   * this target writes or deletes one of those kinds, reads the fleet's inventory (which holds them: no extra LIST), or
   * CLAIMS_MAX_AGE_MS pass; so a fleet of clusters with Gateways costs two LISTs per run, not two per cluster.
   */
  async listHostClaims(): Promise<KubeObject[]> {
    if (this.claims && Date.now() - this.claims.at <= CLAIMS_MAX_AGE_MS) return this.claims.objects;
    const at = Date.now();
    const objects = (async () => (await Promise.all(CLAIM_TYPES.map((t) => this.listKind(t, LABELS.inventory)))).flat())();
    this.claims = { at, objects };
    objects.catch(() => {
      if (this.claims?.objects === objects) this.claims = undefined;
    });
    return objects;
  }

  async listFleetInventory(): Promise<Map<string, KubeObject[]>> {
    const lists = await Promise.all(INVENTORY_TYPES.map((t) => this.listKind(t, LABELS.inventory)));
    this.claims = { at: Date.now(), objects: Promise.resolve(lists.flat().filter(isClaimKind)) };
    const fleet = new Map<string, KubeObject[]>();
    for (const obj of lists.flat()) {
      const cluster = obj.metadata.labels?.[LABELS.inventory];
      if (!cluster) continue;
      let objs = fleet.get(cluster);
      if (!objs) fleet.set(cluster, (objs = []));
      objs.push(obj);
    }
    return fleet;
  }

  async apply(obj: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    if (!opts.dryRun && isClaimKind(obj)) this.claims = undefined;
    return this.client.apply(stripServerFields(obj), { dryRun: opts.dryRun });
  }

  async delete(live: KubeObject, cluster: string, opts: WriteOptions): Promise<"deleted" | "gone" | "not-owned"> {
    if (!opts.dryRun && isClaimKind(live)) this.claims = undefined;
    let current: KubeObject | undefined = live;
    // Two tries: a 409 means the uid precondition failed (the object was replaced): re-read and decide again.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (!current) return "gone";
      if (current.metadata.labels?.[LABELS.inventory] !== cluster) return "not-owned";
      try {
        const uid = current.metadata.uid;
        const deleted = await this.client.delete(refOf(current), { dryRun: opts.dryRun, preconditions: uid ? { uid } : undefined });
        return deleted ? "deleted" : "gone";
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 409) || attempt === 1) throw err;
        current = await this.client.get(refOf(current));
      }
    }
    return "gone";
  }

  async recreate(live: KubeObject, desired: KubeObject, opts: WriteOptions): Promise<string[]> {
    if (!opts.dryRun && isClaimKind(live)) this.claims = undefined;
    return recreateObject(this.client, live, desired, opts, this.recreateWait);
  }

  async missingKinds(kinds: ReadonlyArray<{ apiVersion: string; kind: string }>): Promise<Array<{ apiVersion: string; kind: string }>> {
    return this.discovery.missing(kinds);
  }

  async close(): Promise<void> {
    this.client.close();
  }

  /** One label-selected LIST of a kind; a kind the server does not serve (404) holds nothing. */
  private async listKind(type: ResourceType, labelSelector: string, namespace?: string): Promise<KubeObject[]> {
    try {
      return await this.client.list(type, { labelSelector, namespace });
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return [];
      throw err;
    }
  }
}
