// Public hosts as fleet-wide claims: a host a Gateway serves on the shared ingress (or a VirtualService bound to a
// gateway) belongs to one cluster; the older claim wins, and a cluster that would serve another's host is not applied.
//
// "Older" is decided on the host, the same way by every run: a claim is as old as the oldest live vc-managed object of
// that cluster that carries it (its creationTimestamp; a claim not yet live is the newest); equal ages go to the
// cluster whose name sorts first. Clusters of one `vc apply` that claim a host nobody holds yet are all refused:
// neither claim is older. The reconciler resolves the claims of a pass before any write with the same tie rule (see
// PeerTies "first-name"): of the clusters of one pass that claim a host nobody holds live, the name that sorts first
// wins and the others are refused, so exactly one is applied.
import type { KubeObject } from "../kube/object.js";
import { MESH_API_VERSION } from "../kube/resources.js";
import { LABELS } from "../translate/keys.js";
import { ClaimIndex, peerIndexOf, type LiveClaim } from "./claim-index.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const norm = (host: string): string => (host.endsWith(".") ? host.slice(0, -1) : host).toLowerCase();

/**
 * The gateway name that means "the sidecars", not a gateway: a VirtualService bound only to it serves no public host.
 */
const MESH_GATEWAY = "mesh";

/** One public host an object claims and where it sits in the object (`["spec", "hosts", 0]`). */
export interface ClaimedHostPath {
  host: string;
  path: Array<string | number>;
}

/**
 * The public hosts a host object claims, each with its place: the DNS names of a Gateway's `servers[].hosts` (after
 * `namespace/`), and the `hosts` of a VirtualService bound to a gateway (not only `mesh`) that are not cluster
 * services.
 */
export function claimedHostPaths(obj: KubeObject): ClaimedHostPath[] {
  if (obj.apiVersion !== MESH_API_VERSION || !isObject(obj.spec)) return [];
  const spec = obj.spec;
  const out: ClaimedHostPath[] = [];
  if (obj.kind === "Gateway") {
    list(spec.servers).forEach((server, i) => {
      if (!isObject(server)) return;
      list(server.hosts).forEach((h, j) => {
        if (typeof h === "string")
          out.push({ host: norm(h.slice(h.indexOf("/") + 1)), path: ["spec", "servers", i, "hosts", j] });
      });
    });
  } else if (obj.kind === "VirtualService") {
    const gateways = [
      ...list(spec.gateways),
      ...list(spec.http).flatMap((r) =>
        isObject(r) ? list(r.match).flatMap((m) => (isObject(m) ? list(m.gateways) : [])) : [],
      ),
    ];
    if (!gateways.some((g) => typeof g === "string" && g !== MESH_GATEWAY)) return [];
    list(spec.hosts).forEach((h, j) => {
      if (typeof h === "string" && !norm(h).endsWith(".svc.cluster.local"))
        out.push({ host: norm(h), path: ["spec", "hosts", j] });
    });
  }
  return out.filter((c) => c.host !== "");
}

/** The public hosts a host object claims (see claimedHostPaths), each once. */
export function publicHosts(obj: KubeObject): string[] {
  return [...new Set(claimedHostPaths(obj).map((c) => c.host))];
}

/** The claims of one live object: none unless it carries the inventory label. */
export function liveClaimsOf(o: KubeObject): LiveClaim[] {
  const cluster = o.metadata.labels?.[LABELS.inventory];
  if (!cluster) return [];
  const created = (o.metadata as { creationTimestamp?: unknown }).creationTimestamp;
  const since =
    created instanceof Date ? created.getTime() : typeof created === "string" ? Date.parse(created) : Number.NaN;
  return publicHosts(o).map((host) => ({
    cluster,
    host,
    since: Number.isNaN(since) ? Number.MAX_SAFE_INTEGER : since,
    object: `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`,
  }));
}

/**
 * A host this cluster would serve that an older claim of another cluster holds (or that another cluster of the run also
 * claims first).
 */
export interface Contest {
  host: string;
  holder: string;
  /** Why the holder's claim wins. */
  why: string;
}

/**
 * How claims of one run that nobody holds live are decided: "refuse-all" (`vc apply`: neither is older, all are
 * refused) or "first-name" (the reconciler's pass: the cluster whose name sorts first wins, the same tie rule as equal
 * ages).
 */
export type PeerTies = "refuse-all" | "first-name";

/**
 * The hosts of `cluster`'s desired objects whose claim loses: to an older live claim of another cluster, or, where no
 * cluster holds the host live, to another cluster of the same run (`peers`: each other cluster's claimed hosts;
 * `ties`).
 */
export function lostClaims(
  cluster: string,
  desired: readonly KubeObject[],
  live: readonly LiveClaim[] | ClaimIndex,
  peers: ReadonlyMap<string, readonly string[]> = new Map(),
  ties: PeerTies = "refuse-all",
): Contest[] {
  const mine = [...new Set(desired.flatMap(publicHosts))].sort();
  if (mine.length === 0) return [];
  const index = live instanceof ClaimIndex ? live : ClaimIndex.ofClaims(live);
  const out: Contest[] = [];
  for (const host of mine) {
    const overlapping = index.overlapping(host);
    const own = overlapping
      .filter((c) => c.cluster === cluster && c.host === host)
      .reduce((t, c) => Math.min(t, c.since), Number.POSITIVE_INFINITY);
    const rivals = overlapping.filter((c) => c.cluster !== cluster);
    const older = rivals
      .filter((c) => c.since < own || (c.since === own && c.cluster < cluster))
      .sort((a, b) => a.since - b.since || (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0))[0];
    if (older) {
      out.push({
        host,
        holder: older.cluster,
        why:
          older.since < Number.MAX_SAFE_INTEGER
            ? `${older.object} has served "${older.host}" since ${new Date(older.since).toISOString()}`
            : `${older.object} claims "${older.host}" since an earlier run`,
      });
      continue;
    }
    if (own !== Number.POSITIVE_INFINITY || rivals.length > 0) continue; // this cluster's live claim is the oldest
    const peer = peerIndexOf(peers)
      .claimants(host)
      .filter((name) => name !== cluster && (ties === "refuse-all" || name < cluster))
      .sort()[0];
    if (peer === undefined) continue;
    const why =
      ties === "refuse-all"
        ? `cluster ${peer} claims it in the same run and neither claim is live yet, so neither is older`
        : `cluster ${peer} claims it in the same pass and neither claim is live yet: of equal claims the cluster ` +
          `name that sorts first wins`;
    out.push({ host, holder: peer, why });
  }
  return out;
}

/** The message of a plan blocked by lost claims. */
export function contestMessage(cluster: string, contests: readonly Contest[]): string {
  const parts = contests.map((c) => `"${c.host}" belongs to cluster ${c.holder} (${c.why})`);
  return (
    `public host${contests.length > 1 ? "s" : ""} ${parts.join("; ")}: one cluster per public host, the older ` +
    `claim wins; nothing of cluster ${cluster} is applied until its mesh manifests stop claiming ` +
    `${contests.length > 1 ? "them" : "it"}`
  );
}
