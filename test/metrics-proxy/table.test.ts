import { expect } from "chai";
import { formatCpu, formatMemory, quantityValue, toTable, wantsTable } from "../../src/metrics-proxy/table.js";

describe("metrics-proxy tables", () => {
  it("parses quantities in every suffix form", () => {
    expect(quantityValue("250m")).to.equal(0.25);
    expect(quantityValue("2")).to.equal(2);
    expect(quantityValue("1500000n")).to.be.closeTo(0.0015, 1e-12);
    expect(quantityValue("128Mi")).to.equal(128 * 2 ** 20);
    expect(quantityValue("1.5Gi")).to.equal(1.5 * 2 ** 30);
    expect(quantityValue("1k")).to.equal(1000);
    expect(quantityValue("1e3")).to.equal(1000);
    expect(quantityValue("12 apples")).to.be.NaN;
  });

  it("formats CPU as millicores (nanocores when not whole) and memory in the largest exact binary unit", () => {
    expect(formatCpu(0.016)).to.equal("16m");
    expect(formatCpu(0.0000015)).to.equal("1500n");
    expect(formatMemory(1536 * 1024)).to.equal("1536Ki");
    expect(formatMemory(2 ** 30)).to.equal("1Gi");
    expect(formatMemory(1000)).to.equal("1000");
    expect(formatMemory(0)).to.equal("0");
  });

  it("sums a pod's containers into one row and keeps the object's metadata", () => {
    const table: any = toTable({
      kind: "PodMetricsList",
      items: [
        {
          metadata: { name: "web", namespace: "ns" },
          window: "30s",
          containers: [
            { name: "a", usage: { cpu: "11m", memory: "1Mi" } },
            { name: "b", usage: { cpu: "5m", memory: "512Ki" } },
          ],
        },
      ],
    });
    expect(table.kind).to.equal("Table");
    expect(table.columnDefinitions.map((c: any) => c.name)).to.deep.equal(["Name", "CPU", "Memory", "Window"]);
    expect(table.rows[0].cells).to.deep.equal(["web", "16m", "1536Ki", "30s"]);
    expect(table.rows[0].object.metadata).to.deep.equal({ name: "web", namespace: "ns" });
    expect(wantsTable("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")).to.equal(true);
    expect(wantsTable("application/json")).to.equal(false);
  });
});
