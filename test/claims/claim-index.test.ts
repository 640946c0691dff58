// The claim indexes answer what a scan of every claim answered: the same rivals and peers for exact and wildcard hosts,
// and an object put again or removed changes its claims only.
import { expect } from "chai";
import { ClaimIndex, PeerIndex, type LiveClaim } from "../../src/claims/claim-index.js";
import { overlaps } from "../../src/claims/hosts.js";
import { liveClaimsOf } from "../../src/claims/host-claims.js";
import type { KubeObject } from "../../src/kube/object.js";

const HOSTS = [
  "shop.example.com",
  "pay.example.com",
  "a.pay.example.com",
  "*.pay.example.com",
  "*.example.com",
  "*",
  "other.test",
  "*.test",
];

/** A small deterministic generator (mulberry32), so that a failure names its seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const gateway = (cluster: string, name: string, hosts: string[], created: string): KubeObject => ({
  apiVersion: "networking.mesh.io/v1beta1",
  kind: "Gateway",
  metadata: {
    name,
    namespace: `vc-${cluster}`,
    labels: { "vc.orch.io/inventory": cluster },
    creationTimestamp: created,
  },
  spec: { servers: [{ port: { number: 443, name: "https", protocol: "HTTPS" }, hosts }] },
});

describe("claims/index", () => {
  it(
    "finds the claims overlapping a host as a scan of every claim does (exact and wildcard hosts, 200 random " +
      "fleets)",
    () => {
      for (let seed = 1; seed <= 200; seed++) {
        const next = random(seed);
        const pick = () => HOSTS[Math.floor(next() * HOSTS.length)]!;
        const claims: LiveClaim[] = Array.from({ length: Math.floor(next() * 12) }, (_, i) => ({
          cluster: `c${Math.floor(next() * 4)}`,
          host: pick(),
          since: Math.floor(next() * 3),
          object: `Gateway vc/g${i}`,
        }));
        const index = ClaimIndex.ofClaims(claims);
        for (const host of HOSTS) {
          const scanned = claims
            .filter((c) => overlaps(c.host, host))
            .map((c) => c.object)
            .sort();
          expect(
            index
              .overlapping(host)
              .map((c) => c.object)
              .sort(),
            `seed ${seed}, host ${host}`,
          ).to.deep.equal(scanned);
        }
        const peers = new Map(
          Array.from({ length: 5 }, (_, i) => [`p${i}`, Array.from({ length: Math.floor(next() * 3) }, pick)] as const),
        );
        const peerIndex = new PeerIndex(peers);
        for (const host of HOSTS) {
          const scanned = [...peers]
            .filter(([, hosts]) => hosts.some((h) => overlaps(h, host)))
            .map(([name]) => name)
            .sort();
          expect(peerIndex.claimants(host).sort(), `seed ${seed}, peers of ${host}`).to.deep.equal(scanned);
        }
      }
    },
  );

  it("an object put again replaces its claims; a removed one has none; other objects' claims stay", () => {
    const a = gateway("a", "public", ["shop.example.com"], "2026-01-01T00:00:00Z");
    const b = gateway("b", "public", ["*.example.com"], "2026-02-01T00:00:00Z");
    const index = ClaimIndex.ofObjects([a, b], liveClaimsOf);
    expect(
      index
        .overlapping("shop.example.com")
        .map((c) => c.cluster)
        .sort(),
    ).to.deep.equal(["a", "b"]);
    index.put(gateway("a", "public", ["pay.example.com"], "2026-01-01T00:00:00Z"));
    expect(index.overlapping("shop.example.com").map((c) => c.cluster)).to.deep.equal(["b"]);
    expect(
      index
        .overlapping("pay.example.com")
        .map((c) => c.cluster)
        .sort(),
    ).to.deep.equal(["a", "b"]);
    index.remove("networking.mesh.io/Gateway/vc-b/public");
    expect(index.overlapping("pay.example.com").map((c) => c.cluster)).to.deep.equal(["a"]);
    expect(index.objects().map((o) => o.metadata.namespace)).to.deep.equal(["vc-a"]);
    // Of the objects only their references are kept, not their specs (a fleet's would stay in memory for a run).
    expect(index.objects()).to.deep.equal([
      { apiVersion: "networking.mesh.io/v1beta1", kind: "Gateway", metadata: { name: "public", namespace: "vc-a" } },
    ]);
  });
});
