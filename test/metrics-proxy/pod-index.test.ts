import { expect } from "chai";
import { PodIndex, virtualPodOf, type HostPod } from "../../src/metrics-proxy/pod-index.js";
import { ANNOTATIONS, LABELS, hostName } from "../../src/translate/index.js";

function pod(
  cluster: string | undefined,
  ns: string,
  name: string,
  opts: { labels?: Record<string, string>; node?: string; host?: string } = {},
): HostPod {
  const labels: Record<string, string> = { ...opts.labels };
  if (cluster) labels[LABELS.managedBy] = cluster;
  return {
    metadata: {
      name: opts.host ?? hostName(name, ns, cluster ?? "none"),
      namespace: "host",
      labels,
      annotations: { [ANNOTATIONS.objectName]: name, [ANNOTATIONS.objectNamespace]: ns },
    },
    spec: opts.node ? { nodeName: opts.node } : {},
  };
}

describe("metrics-proxy pod index", () => {
  it("maps a host pod to its virtual identity from label and annotations, stripping vc's labels", () => {
    const vp = virtualPodOf(
      pod("a", "default", "web", { labels: { app: "web", "vc.orch.io/inventory": "a" }, node: "n1" }),
      "a",
    );
    expect(vp).to.deep.equal({
      hostName: "web-x-default-x-a",
      namespace: "default",
      name: "web",
      labels: { app: "web" },
      nodeName: "n1",
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
    const index = new PodIndex("a");
    index.replace([p]);
    expect(index.get("team-namespace", long)?.hostName).to.equal(p.metadata.name);
    expect(index.byHostName(p.metadata.name)?.name).to.equal(long);
  });

  it("applies watch events: add, relabel out of the cluster, delete; tracks nodes", () => {
    const index = new PodIndex("a");
    index.apply("ADDED", pod("a", "ns1", "p1", { node: "n1" }));
    index.apply("ADDED", pod("a", "ns1", "p2", { node: "n1" }));
    index.apply("ADDED", pod("a", "ns2", "p1", { node: "n2" }));
    expect(index.size).to.equal(3);
    expect([...index.nodeNames()].sort()).to.deep.equal(["n1", "n2"]);
    const moved = pod("a", "ns2", "p1", { node: "n2" });
    moved.metadata.labels![LABELS.managedBy] = "b";
    index.apply("MODIFIED", moved);
    expect(index.get("ns2", "p1")).to.equal(undefined);
    expect([...index.nodeNames()]).to.deep.equal(["n1"]);
    index.apply("DELETED", pod("a", "ns1", "p1", { node: "n1" }));
    expect(index.hasNode("n1")).to.equal(true);
    index.apply("DELETED", pod("a", "ns1", "p2", { node: "n1" }));
    expect(index.hasNode("n1")).to.equal(false);
    expect(index.size).to.equal(0);
  });

  it("sorts by namespace then name and answers duplicates deterministically", () => {
    const index = new PodIndex("a");
    index.replace([
      pod("a", "b", "z"),
      pod("a", "a", "y"),
      pod("a", "b", "a"),
      pod("a", "a", "y", { host: "zzz-dup" }),
      pod("a", "a", "y", { host: "aaa-dup" }),
    ]);
    expect(index.sorted().map((p) => `${p.namespace}/${p.name}`)).to.deep.equal(["a/y", "b/a", "b/z"]);
    expect(index.get("a", "y")?.hostName).to.equal("aaa-dup");
    expect(index.byHostName("zzz-dup")).to.equal(undefined);
    index.apply("DELETED", pod("a", "a", "y", { host: "aaa-dup" }));
    expect(index.get("a", "y")?.hostName).to.equal("y-x-a-x-a");
  });
});
