// Reads what many clusters' health needs with one LIST per kind across namespaces (the I/O edge of `vc list`), instead
// of readClusterHealth's reads per cluster; the same rules (cluster.ts) decide each cluster's health.
import type { KubeObject } from "../kube/object.js";
import { refOf, withoutManagedFields } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { KubeApiError, type KubeClient } from "../host/client.js";
import { clusterHealth, type LiveOf } from "./cluster.js";
import { hasHealthRules } from "./object.js";
import { claimNames, why } from "./read.js";
import { isControlledBy, POD_PAGE, readControlledPods, ReadBoundExceeded, selectorLabels } from "./owned-pods.js";
import type { ClusterHealth } from "../model/health.js";
import { groupBy } from "../util/group.js";

/** A cluster whose health is read: its host namespace and rendered objects. */
export interface FleetHealthCluster {
  name: string;
  hostNamespace: string;
  objects: readonly KubeObject[];
}

/** What the caller already listed across namespaces, reused instead of listed again. */
export interface AlreadyListed {
  /**
   * Every live object of a kind (`apiVersion/kind`) that the clusters render, e.g. StatefulSets by a label each
   * rendered one carries.
   */
  kinds?: ReadonlyMap<string, readonly KubeObject[]>;
  /** Pods listed across namespaces with a label selector (the workloads' selectors are matched in memory). */
  pods?: ReadonlyArray<{ selector: string; items: readonly KubeObject[] }>;
}

/** The user may not list a kind across namespaces: the caller reads cluster by cluster instead. */
export class FleetReadForbidden extends Error {}

const kindKey = (apiVersion: string, kind: string) => `${apiVersion}/${kind}`;
const objKey = (apiVersion: string, kind: string, namespace: string | undefined, name: string) =>
  `${apiVersion}/${kind}/${namespace ?? ""}/${name}`;

/**
 * One LIST across namespaces, a page at a time, keeping of each object only what `keep` wants and without its
 * managedFields (no health rule reads them): a fleet's objects of a kind are never all held whole. An unserved kind
 * (404) holds nothing; 403 ends the fleet read.
 */
async function listAll(
  client: KubeClient,
  apiVersion: string,
  kind: string,
  opts: { labelSelector?: string; fieldSelector?: string; limit?: number } = {},
  keep: (o: KubeObject) => boolean = () => true,
): Promise<KubeObject[]> {
  const type = resourceFor(apiVersion, kind);
  if (!type) return [];
  try {
    return await client.listMapped(type, opts, (o) => (keep(o) ? withoutManagedFields(o) : undefined));
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return [];
    if (err instanceof KubeApiError && err.status === 403) throw new FleetReadForbidden(err.message);
    throw err;
  }
}

/**
 * The pods of workloads with these pod selectors (matchLabels) in one LIST: keys every selector shares with one value
 * select it, keys whose values differ select their presence, and each workload's exact labels are matched in memory.
 */
function podSelector(selectors: ReadonlyArray<Record<string, string>>): string {
  const keys = [...new Set(selectors.flatMap((s) => Object.keys(s)))].sort();
  return keys
    .map((k) => {
      const values = new Set(selectors.map((s) => s[k]));
      const only = values.size === 1 ? [...values][0] : undefined;
      return only !== undefined ? `${k}=${only}` : k;
    })
    .join(",");
}

const normalSelector = (s: string) => s.split(",").sort().join(",");

/**
 * The health of each cluster, from one LIST per health-bearing kind the clusters render, one LIST of pods per shape of
 * workload selector, one of claims (when a StatefulSet has claim templates) and one of pod events (only when a pod is
 * Pending): O(kinds) requests whatever the number of clusters. Throws FleetReadForbidden when a fleet-wide LIST is
 * forbidden. A LIST that fails otherwise leaves what it would have shown Unknown, with why, as a failed read does.
 */
export async function readFleetHealth(
  client: KubeClient,
  clusters: readonly FleetHealthCluster[],
  listed: AlreadyListed = {},
): Promise<Map<string, ClusterHealth>> {
  const objectsOf = await readObjects(client, clusters, listed);
  const workloadsOf = new Map(clusters.map((c) => [c.name, workloads(objectsOf.get(c.name)!)]));
  const read = await readPods(client, workloadsOf, listed);
  const parts = podsOfClusters(clusters, workloadsOf, read);
  const events = await readPendingEvents(client, clusters, parts);
  const out = new Map<string, ClusterHealth>();
  for (const c of clusters) {
    const objects = objectsOf.get(c.name)!;
    const failed = read.failed ?? read.failedOf?.get(c.name);
    if (failed !== undefined && workloadsOf.get(c.name)!.length > 0) {
      const unreadablePods: LiveOf = {
        ref: { apiVersion: "v1", kind: "Pod", namespace: c.hostNamespace, name: "*" },
        unreadable: failed,
      };
      out.set(c.name, clusterHealth({ objects: [...objects, unreadablePods], pods: [], claims: [] }));
      continue;
    }
    const p = parts.get(c.name)!;
    const own = events.pending.has(c.hostNamespace) ? (events.byNamespace.get(c.hostNamespace) ?? []) : [];
    out.set(c.name, clusterHealth({ objects, pods: p.pods, claims: p.claims, events: own }));
  }
  return out;
}

/** Each cluster's health-bearing objects as live: one LIST per kind for the fleet (or why a kind could not be read). */
async function readObjects(
  client: KubeClient,
  clusters: readonly FleetHealthCluster[],
  listed: AlreadyListed,
): Promise<Map<string, LiveOf[]>> {
  const wanted = new Map(clusters.map((c) => [c.name, c.objects.filter(hasHealthRules)]));
  // The live objects of each health-bearing kind, by apiVersion/kind/namespace/name (or why the kind could not be
  // read).
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  const wantedKeys = new Set<string>();
  for (const objs of wanted.values()) {
    for (const o of objs) {
      kinds.set(kindKey(o.apiVersion, o.kind), { apiVersion: o.apiVersion, kind: o.kind });
      const ref = refOf(o);
      wantedKeys.add(objKey(o.apiVersion, o.kind, ref.namespace, ref.name));
    }
  }
  const live = new Map<string, KubeObject>();
  const failed = new Map<string, string>();
  await Promise.all(
    [...kinds].map(async ([k, { apiVersion, kind }]) => {
      try {
        const items =
          listed.kinds?.get(k) ??
          (await listAll(client, apiVersion, kind, {}, (o) =>
            wantedKeys.has(objKey(apiVersion, kind, o.metadata.namespace, o.metadata.name)),
          ));
        for (const o of items)
          live.set(objKey(apiVersion, kind, o.metadata.namespace, o.metadata.name), { ...o, apiVersion, kind });
      } catch (err) {
        if (err instanceof FleetReadForbidden) throw err;
        failed.set(k, why(err));
      }
    }),
  );
  const objectsOf = new Map<string, LiveOf[]>();
  for (const c of clusters) {
    objectsOf.set(
      c.name,
      wanted.get(c.name)!.map((d): LiveOf => {
        const ref = refOf(d);
        const unreadable = failed.get(kindKey(d.apiVersion, d.kind));
        if (unreadable) return { ref, unreadable };
        const o = live.get(objKey(d.apiVersion, d.kind, ref.namespace, ref.name));
        return o ? { ref, live: o } : { ref };
      }),
    );
  }

  return objectsOf;
}

/** The live StatefulSets and Deployments among a cluster's objects. */
function workloads(objects: readonly LiveOf[]): KubeObject[] {
  return objects
    .map((o) => o.live)
    .filter((o): o is KubeObject => !!o && (o.kind === "StatefulSet" || o.kind === "Deployment"));
}

/**
 * The pods the workloads control (one LIST per shape of selector, a page of POD_PAGE at a time, each pod kept only when
 * a workload vc applied controls it, directly or through a ReplicaSet of its Deployment, by UID: a tenant's pods with
 * the control plane's labels are let go as they are read) and, when needed, the claims. Past the pods the workloads
 * may have (MAX_PODS_SCANNED more), the fleet's LIST stops and each cluster's pods are read on their own (by name for
 * StatefulSets), so a tenant's pods cost a bounded read.
 */
async function readPods(
  client: KubeClient,
  workloadsOf: ReadonlyMap<string, KubeObject[]>,
  listed: AlreadyListed,
): Promise<{ pods: KubeObject[]; claims: KubeObject[]; failed?: string; failedOf?: Map<string, string> }> {
  const shapes = new Map<string, Array<Record<string, string>>>();
  const failedOf = new Map<string, string>();
  const all = [...workloadsOf.values()].flat();
  for (const w of all) {
    const labels = selectorLabels(w);
    if (!labels) continue;
    const shape = Object.keys(labels).sort().join(",");
    shapes.set(shape, [...(shapes.get(shape) ?? []), labels]);
  }
  try {
    const owners = await controllingUids(client, all, shapes);
    const expected = all.reduce((n, w) => n + ((w.spec as { replicas?: number } | undefined)?.replicas ?? 1), 0);
    const bound = expected * 2 + MAX_FLEET_PODS_OVER;
    let scanned = 0;
    const pods: KubeObject[] = [];
    try {
      for (const selectors of shapes.values()) {
        const selector = podSelector(selectors);
        const given = listed.pods?.find((p) => normalSelector(p.selector) === normalSelector(selector));
        const keep = (p: KubeObject) => {
          if (++scanned > bound) throw new ReadBoundExceeded("too many pods carry the workloads' labels");
          return owners.has(controllerOf(p) ?? "");
        };
        pods.push(
          ...(given
            ? given.items.filter((p) => owners.has(controllerOf(p) ?? ""))
            : await listAll(client, "v1", "Pod", { labelSelector: selector, limit: POD_PAGE }, keep)),
        );
      }
    } catch (err) {
      if (!(err instanceof ReadBoundExceeded)) throw err;
      // A tenant's pods carry the workloads' labels: each cluster's own pods, read on their own and bounded.
      pods.length = 0;
      for (const [cluster, ws] of workloadsOf) {
        const ns = ws[0]?.metadata.namespace;
        if (!ns) continue;
        try {
          pods.push(...(await readControlledPods(client, ns, ws)));
        } catch (e) {
          if (!(e instanceof ReadBoundExceeded)) throw e;
          failedOf.set(cluster, e.message);
        }
      }
    }
    const claimed = all.some((w) => w.kind === "StatefulSet" && claimNames(w).size > 0);
    return { pods, claims: claimed ? await readClaims(client, all) : [], failedOf };
  } catch (err) {
    if (err instanceof FleetReadForbidden) throw err;
    return { pods: [], claims: [], failed: why(err) };
  }
}

/** Pods the fleet's LIST reads past twice the workloads' replicas before it stops (fleetRead's bound). */
const MAX_FLEET_PODS_OVER = 500;

/** The UID of a pod's controller (its ownerReference with `controller: true`). */
function controllerOf(p: KubeObject): string | undefined {
  const refs = (p.metadata as { ownerReferences?: Array<{ uid?: string; controller?: boolean }> }).ownerReferences;
  return Array.isArray(refs) ? refs.find((r) => r?.controller === true)?.uid : undefined;
}

/**
 * The UIDs that control the workloads' pods: each StatefulSet's own, and those of the ReplicaSets each Deployment
 * controls (one LIST of ReplicaSets per shape of selector; ReplicaSets are not the syncer's to write).
 */
async function controllingUids(
  client: KubeClient,
  workloads: readonly KubeObject[],
  shapes: ReadonlyMap<string, Array<Record<string, string>>>,
): Promise<Set<string>> {
  const out = new Set<string>();
  const deployments = new Set<string>();
  for (const w of workloads) {
    const uid = w.metadata.uid;
    if (!uid) continue;
    if (w.kind === "StatefulSet") out.add(uid);
    else deployments.add(uid);
  }
  if (deployments.size === 0) return out;
  for (const selectors of shapes.values()) {
    const sets = await client
      .listPathMapped<KubeObject, string>(
        "/apis/apps/v1/replicasets",
        { labelSelector: podSelector(selectors), limit: POD_PAGE },
        (rs) => (deployments.has(controllerOf(rs) ?? "") ? rs.metadata.uid : undefined),
      )
      .catch((err: unknown) => {
        if (err instanceof KubeApiError && err.status === 404) return [];
        if (err instanceof KubeApiError && err.status === 403) throw new FleetReadForbidden(err.message);
        throw err;
      });
    for (const uid of sets) out.add(uid);
  }
  return out;
}

/**
 * The StatefulSets' claims: one LIST across namespaces, a page at a time, keeping only the claims the StatefulSets name
 * (the tenant's syncer may create claims too: none of them is held).
 */
async function readClaims(client: KubeClient, workloads: readonly KubeObject[]): Promise<KubeObject[]> {
  const wanted = new Set(
    workloads
      .filter((w) => w.kind === "StatefulSet")
      .flatMap((w) => [...claimNames(w)].map((name) => `${w.metadata.namespace ?? ""}/${name}`)),
  );
  return listAll(client, "v1", "PersistentVolumeClaim", { limit: POD_PAGE }, (c) =>
    wanted.has(`${c.metadata.namespace ?? ""}/${c.metadata.name}`),
  );
}

/** Each cluster's share of the pods (those its workloads select, in their namespace) and of the claims. */
function podsOfClusters(
  clusters: readonly FleetHealthCluster[],
  workloadsOf: ReadonlyMap<string, KubeObject[]>,
  read: { pods: KubeObject[]; claims: KubeObject[] },
): Map<string, { pods: KubeObject[]; claims: KubeObject[] }> {
  const podsByNamespace = groupBy(read.pods, namespaceOf);
  const claimsByNamespace = groupBy(read.claims, namespaceOf);
  const parts = new Map<string, { pods: KubeObject[]; claims: KubeObject[] }>();
  for (const c of clusters) {
    const mine: KubeObject[] = [];
    const seen = new Set<string>();
    for (const w of workloadsOf.get(c.name)!) {
      const labels = selectorLabels(w);
      if (!labels) continue;
      for (const p of podsByNamespace.get(w.metadata.namespace ?? c.hostNamespace) ?? []) {
        if (seen.has(p.metadata.name) || !Object.entries(labels).every(([k, v]) => p.metadata.labels?.[k] === v))
          continue;
        if (w.kind === "StatefulSet" && !isControlledBy(p, w.metadata.uid)) continue;
        mine.push(p);
        seen.add(p.metadata.name);
      }
    }
    const wantedClaims = new Set(
      workloadsOf
        .get(c.name)!
        .filter((w) => w.kind === "StatefulSet")
        .flatMap((w) => [...claimNames(w)]),
    );
    parts.set(c.name, {
      pods: mine,
      claims:
        wantedClaims.size === 0
          ? []
          : (claimsByNamespace.get(c.hostNamespace) ?? []).filter((x) => wantedClaims.has(x.metadata.name)),
    });
  }

  return parts;
}

/** Events only for the causes of a Pending pod: one LIST of pod events, when some pod is Pending. */
async function readPendingEvents(
  client: KubeClient,
  clusters: readonly FleetHealthCluster[],
  parts: ReadonlyMap<string, { pods: KubeObject[] }>,
): Promise<{ pending: Set<string>; byNamespace: Map<string, KubeObject[]> }> {
  const pendingIn = new Set<string>();
  for (const c of clusters)
    if (parts.get(c.name)!.pods.some((p) => (p.status as { phase?: string } | undefined)?.phase === "Pending"))
      pendingIn.add(c.hostNamespace);
  // One LIST of pod events across namespaces, a page at a time, keeping only the Pending pods' own: the syncer may
  // create events too, about any name.
  const pendingPods = new Set(
    clusters.flatMap((c) =>
      parts
        .get(c.name)!
        .pods.filter((p) => (p.status as { phase?: string } | undefined)?.phase === "Pending")
        .map((p) => `${p.metadata.namespace ?? ""}/${p.metadata.name}`),
    ),
  );
  const about = (e: KubeObject) => {
    const o = (e as { involvedObject?: { namespace?: string; name?: string } }).involvedObject;
    return `${e.metadata.namespace ?? ""}/${o?.name ?? ""}`;
  };
  const events =
    pendingPods.size === 0
      ? new Map<string, KubeObject[]>()
      : groupBy(
          await listAll(client, "v1", "Event", { fieldSelector: "involvedObject.kind=Pod", limit: POD_PAGE }, (e) =>
            pendingPods.has(about(e)),
          ).catch((): KubeObject[] => []),
          namespaceOf,
        );
  return { pending: pendingIn, byNamespace: events };
}

const namespaceOf = (o: KubeObject): string => o.metadata.namespace ?? "";
