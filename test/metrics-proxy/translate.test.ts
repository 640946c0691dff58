import { expect } from "chai";
import {
  isHostOnlyKey,
  toVirtualNodeMetrics,
  toVirtualPodMetrics,
  virtualLabels,
} from "../../src/metrics-proxy/translate.js";

describe("metrics-proxy translation", () => {
  it("treats vc.orch.io keys and its subdomains as host-only, everything else as virtual", () => {
    expect(isHostOnlyKey("vc.orch.io/managed-by")).to.equal(true);
    expect(isHostOnlyKey("syncer.vc.orch.io/namespace")).to.equal(true);
    expect(isHostOnlyKey("app")).to.equal(false);
    expect(isHostOnlyKey("example.com/vc.orch.io")).to.equal(false);
    expect(isHostOnlyKey("notvc.orch.io/x")).to.equal(false);
    expect(virtualLabels({ "vc.orch.io/managed-by": "a", tier: "web", app: "x" })).to.deep.equal({
      app: "x",
      tier: "web",
    });
  });

  it("builds PodMetrics from the virtual identity and the host usage only", () => {
    const host = {
      metadata: {
        name: "web-x-ns-x-a",
        namespace: "host",
        labels: { "vc.orch.io/managed-by": "a", secret: "host-only" },
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
      timestamp: "2026-01-01T00:00:00Z",
      window: "30s",
      containers: [{ name: "c", usage: { cpu: "5m", memory: "10Mi" } }],
    };
    const out = toVirtualPodMetrics(
      "metrics.k8s.io/v1beta1",
      { name: "web", namespace: "ns", labels: { app: "web" } },
      host,
    );
    expect(out).to.deep.equal({
      kind: "PodMetrics",
      apiVersion: "metrics.k8s.io/v1beta1",
      metadata: { name: "web", namespace: "ns", creationTimestamp: "2026-01-01T00:00:00Z", labels: { app: "web" } },
      timestamp: "2026-01-01T00:00:00Z",
      window: "30s",
      containers: [{ name: "c", usage: { cpu: "5m", memory: "10Mi" } }],
    });
    expect(JSON.stringify(out)).not.to.contain("host");
  });

  it("builds NodeMetrics without host-only labels", () => {
    const out = toVirtualNodeMetrics("metrics.orch.io/v1beta1", {
      metadata: { name: "n1", labels: { "vc.orch.io/x": "y", zone: "z1" } },
      timestamp: "t",
      window: "20s",
      usage: { cpu: "1", memory: "1Gi" },
    });
    expect(out.metadata).to.deep.equal({ name: "n1", labels: { zone: "z1" } });
    expect(out.usage).to.deep.equal({ cpu: "1", memory: "1Gi" });
  });
});
