import { expect } from "chai";
import { PodIndex, virtualPodOf, type HostPod } from "../../src/metrics-proxy/pod-index.js";
import { ANNOTATIONS, LABELS, hostName } from "../../src/translate/index.js";

function pod(
  cluster: string | undefined,
  ns: string,
  name: string,
  opts: { labels?: Record<string, string>; host?: string; hostNamespace?: string } = {},
): HostPod {
  const labels: Record<string, string> = { ...opts.labels };
  if (cluster) labels[LABELS.managedBy] = cluster;
  return {
    metadata: {
      name: opts.host ?? hostName(name, ns, cluster ?? "none"),
      namespace: opts.hostNamespace ?? "vc-a",
      labels,
      annotations: { [ANNOTATIONS.objectName]: name, [ANNOTATIONS.objectNamespace]: ns },
    },
  };
}

const A = { name: "a", hostNamespace: "vc-a" };
const bounds = { maxPods: 100, maxPodsPerNamespace: 100, maxLabelBytes: 1024 };

describe("metrics-proxy pod index", () => {
  it("maps a host pod to its virtual identity from label and annotations, stripping vc's labels", () => {
    const vp = virtualPodOf(pod("a", "default", "web", { labels: { app: "web", "vc.orch.io/inventory": "a" } }), "a");
    expect(vp).to.deep.equal({
      hostName: "web-x-default-x-a",
      namespace: "default",
      name: "web",
      labels: { app: "web" },
    });
  });

  it("ignores pods of other clusters, unlabelled pods and pods without both annotations", () => {
    expect(virtualPodOf(pod("b", "default", "web"), "a")).to.equal(undefined);
    expect(virtualPodOf(pod(undefined, "default", "web"), "a")).to.equal(undefined);
    const noNs = pod("a", "default", "web");
    delete noNs.metadata.annotations![ANNOTATIONS.objectNamespace];
    expect(virtualPodOf(noNs, "a")).to.equal(undefined);
  });

  it("resolves hashed long names through the annotations, never by parsing", () => {
    const long = "a-very-long-pod-name-that-will-certainly-be-hashed-by-the-naming-contract";
    const p = pod("a", "team-namespace", long);
    expect(p.metadata.name).to.have.length(63);
    const index = new PodIndex(bounds);
    index.replace([p]);
    expect(index.view(A).get("team-namespace", long)?.hostName).to.equal(p.metadata.name);
  });

  it(
    "a cluster's pods are those of its own host namespace carrying its name: a tenant's " +
      "pod labelled with another cluster's name stays in its namespace",
    () => {
      const index = new PodIndex(bounds);
      index.replace([
        pod("a", "default", "web"),
        pod("b", "default", "web", { hostNamespace: "vc-b" }),
        // Planted by a's syncer in a's namespace, labelled as b's.
        pod("b", "default", "forged", { hostNamespace: "vc-a" }),
      ]);
      expect(
        index
          .view(A)
          .sorted()
          .map((p) => p.name),
      ).to.deep.equal(["web"]);
      expect(
        index
          .view({ name: "b", hostNamespace: "vc-b" })
          .sorted()
          .map((p) => p.name),
      ).to.deep.equal(["web"]);
      expect(index.view({ name: "a", hostNamespace: "vc-b" }).size).to.equal(0);
    },
  );

  it("applies watch events: add, relabel out of the cluster, delete", () => {
    const index = new PodIndex(bounds);
    index.apply("ADDED", pod("a", "ns1", "p1"));
    index.apply("ADDED", pod("a", "ns1", "p2"));
    index.apply("ADDED", pod("a", "ns2", "p1"));
    expect(index.view(A).size).to.equal(3);
    const moved = pod("a", "ns2", "p1");
    moved.metadata.labels![LABELS.managedBy] = "b";
    index.apply("MODIFIED", moved);
    expect(index.view(A).get("ns2", "p1")).to.equal(undefined);
    expect(index.view({ name: "b", hostNamespace: "vc-a" }).get("ns2", "p1")?.name).to.equal("p1");
    index.apply("DELETED", pod("a", "ns1", "p1"));
    index.apply("DELETED", moved);
    expect(
      index
        .view(A)
        .sorted()
        .map((p) => p.name),
    ).to.deep.equal(["p2"]);
    expect(index.size).to.equal(1);
  });

  it("sorts by namespace then name and answers duplicates deterministically", () => {
    const index = new PodIndex(bounds);
    index.replace([
      pod("a", "b", "z"),
      pod("a", "a", "y"),
      pod("a", "b", "a"),
      pod("a", "a", "y", { host: "zzz-dup" }),
      pod("a", "a", "y", { host: "aaa-dup" }),
    ]);
    expect(
      index
        .view(A)
        .sorted()
        .map((p) => `${p.namespace}/${p.name}`),
    ).to.deep.equal(["a/y", "b/a", "b/z"]);
    expect(index.view(A).get("a", "y")?.hostName).to.equal("aaa-dup");
    index.apply("DELETED", pod("a", "a", "y", { host: "aaa-dup" }));
    expect(index.view(A).get("a", "y")?.hostName).to.equal("y-x-a-x-a");
  });

  it(
    "holds at most its bounds: pods per host namespace, pods in all, " +
      "bytes of labels; past them it counts what it refused",
    () => {
      const index = new PodIndex({ maxPods: 5, maxPodsPerNamespace: 3, maxLabelBytes: 64 });
      for (let i = 0; i < 6; i++) index.apply("ADDED", pod("a", "ns", `p${i}`));
      expect(index.view(A).size).to.equal(3);
      expect(index.refusedIn("vc-a")).to.equal(3);
      for (let i = 0; i < 6; i++) index.apply("ADDED", pod("b", "ns", `p${i}`, { hostNamespace: "vc-b" }));
      expect(index.view({ name: "b", hostNamespace: "vc-b" }).size).to.equal(2);
      expect(index.size).to.equal(5);
      const big = pod("c", "ns", "big", { hostNamespace: "vc-c", labels: { k: "x".repeat(100) } });
      index.apply("ADDED", big);
      expect(index.view({ name: "c", hostNamespace: "vc-c" }).size).to.equal(0);
      expect([...index.overBound().keys()].sort()).to.deep.equal(["vc-a", "vc-b", "vc-c"]);
      // A pod that goes makes room for another.
      index.apply("DELETED", pod("a", "ns", "p0"));
      index.apply("MODIFIED", pod("a", "ns", "p5"));
      expect(
        index
          .view(A)
          .sorted()
          .map((p) => p.name),
      ).to.deep.equal(["p1", "p2", "p5"]);
    },
  );

  it("a rebuild from a LIST answers with the old content until it is committed", () => {
    const index = new PodIndex(bounds);
    index.replace([pod("a", "ns", "old")]);
    const next = index.rebuild();
    next.add(pod("a", "ns", "new"));
    expect(index.view(A).get("ns", "old")?.name).to.equal("old");
    next.commit();
    expect(index.view(A).get("ns", "old")).to.equal(undefined);
    expect(index.view(A).get("ns", "new")?.name).to.equal("new");
  });
});
