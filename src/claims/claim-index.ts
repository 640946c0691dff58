// Indexes of public-host claims (pure): the live claims by host and by object, and one run's claims by host, so that
// checking a cluster's hosts costs a lookup, not a scan of every claim of the fleet (which made a first apply O(N²)).
import { objectKey, refObject, refOf, type KubeObject } from "../kube/object.js";
import { isWildcard, overlaps } from "./hosts.js";

/** A host claimed by a live object of a cluster. */
export interface LiveClaim {
  cluster: string;
  host: string;
  /** Milliseconds since the epoch of the object's creation. */
  since: number;
  /** `Kind namespace/name` of the object that carries it. */
  object: string;
}

/**
 * The live claims of public hosts, kept by the object that carries them: an object applied or read again replaces its
 * claims (put), a deleted one drops them (remove). Exact hosts are found by lookup; wildcard claims, few in practice,
 * are scanned.
 */
export class ClaimIndex {
  readonly #byObject = new Map<string, { object?: KubeObject; claims: LiveClaim[] }>();
  readonly #byHost = new Map<string, Set<LiveClaim>>();
  readonly #wildcards = new Set<LiveClaim>();

  /** `claimsOf`: the claims an object carries (host-claims.ts liveClaimsOf). */
  constructor(private readonly claimsOf: (object: KubeObject) => LiveClaim[] = () => []) {}

  static ofObjects(objects: readonly KubeObject[], claimsOf: (object: KubeObject) => LiveClaim[]): ClaimIndex {
    const index = new ClaimIndex(claimsOf);
    for (const o of objects) index.put(o);
    return index;
  }

  /**
   * An index of claims read already, each with the reference (refObject) of the object that carries them (a paged read
   * reduces each page so).
   */
  static ofClaimed(
    entries: Iterable<{ object: KubeObject; claims: LiveClaim[] }>,
    claimsOf?: (object: KubeObject) => LiveClaim[],
  ): ClaimIndex {
    const index = new ClaimIndex(claimsOf);
    for (const e of entries) index.#add(objectKey(e.object), e.object, e.claims);
    return index;
  }

  /** An index of claims without their objects (tests, callers holding claims already). */
  static ofClaims(claims: readonly LiveClaim[]): ClaimIndex {
    const index = new ClaimIndex();
    claims.forEach((c, i) => index.#add(`claim ${i}`, undefined, [c]));
    return index;
  }

  /** The objects whose claims are kept (those that carry an inventory label), as references: the rest is let go. */
  objects(): KubeObject[] {
    return [...this.#byObject.values()].flatMap((e) => (e.object ? [e.object] : []));
  }

  /** Puts an object's claims in place of what the index held for it. */
  put(object: KubeObject): void {
    const key = objectKey(object);
    this.remove(key);
    // Only the claims and the object's reference are kept: a fleet's Gateways and VirtualServices whole would hold
    // memory in proportion to the fleet for the length of a run.
    this.#add(key, refObject(refOf(object)), this.claimsOf(object));
  }

  /** Drops the claims of the object with this key (kube/object.ts objectKey). */
  remove(key: string): void {
    const held = this.#byObject.get(key);
    if (!held) return;
    this.#byObject.delete(key);
    for (const c of held.claims) {
      if (isWildcard(c.host)) this.#wildcards.delete(c);
      else this.#byHost.get(c.host)?.delete(c);
    }
  }

  /** The live claims whose host overlaps `host` (itself, a wildcard over it, or, for a wildcard, what it covers). */
  overlapping(host: string): LiveClaim[] {
    if (isWildcard(host))
      return [...this.#byHost.values()]
        .flatMap((s) => [...s])
        .concat([...this.#wildcards])
        .filter((c) => overlaps(c.host, host));
    return [...(this.#byHost.get(host) ?? []), ...[...this.#wildcards].filter((c) => overlaps(c.host, host))];
  }

  #add(key: string, object: KubeObject | undefined, claims: LiveClaim[]): void {
    this.#byObject.set(key, { object, claims });
    for (const c of claims) {
      if (isWildcard(c.host)) this.#wildcards.add(c);
      else {
        let set = this.#byHost.get(c.host);
        if (!set) this.#byHost.set(c.host, (set = new Set()));
        set.add(c);
      }
    }
  }
}

/** One run's claims (cluster -> the hosts its plan claims) by host: built once per run, looked up per cluster. */
export class PeerIndex {
  readonly #byHost = new Map<string, string[]>();
  readonly #wildcards: Array<{ cluster: string; host: string }> = [];
  readonly #all: Array<{ cluster: string; host: string }> = [];

  constructor(peers: ReadonlyMap<string, readonly string[]>) {
    for (const [cluster, hosts] of peers) {
      for (const host of new Set(hosts)) {
        this.#all.push({ cluster, host });
        if (isWildcard(host)) this.#wildcards.push({ cluster, host });
        else this.#byHost.set(host, [...(this.#byHost.get(host) ?? []), cluster]);
      }
    }
  }

  /** The clusters of the run claiming a host that overlaps `host`. */
  claimants(host: string): string[] {
    const found = isWildcard(host)
      ? this.#all.filter((p) => overlaps(p.host, host)).map((p) => p.cluster)
      : [
          ...(this.#byHost.get(host) ?? []),
          ...this.#wildcards.filter((p) => overlaps(p.host, host)).map((p) => p.cluster),
        ];
    return [...new Set(found)];
  }
}

const peerIndexes = new WeakMap<ReadonlyMap<string, readonly string[]>, PeerIndex>();

/** The index of a run's claims, built once for the map every cluster of the run is checked against. */
export function peerIndexOf(peers: ReadonlyMap<string, readonly string[]>): PeerIndex {
  let index = peerIndexes.get(peers);
  if (!index) peerIndexes.set(peers, (index = new PeerIndex(peers)));
  return index;
}
