// KubeClient against the API test server: text answers and path listing share the retries and pagination.
import { expect } from "chai";
import { KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

describe("host/client", () => {
  let server: KubeServer;
  let client: KubeClient;
  before(async () => {
    server = await startKubeServer();
    client = KubeClient.open({
      kubeconfig: server.kubeconfigPath,
      context: "test",
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
  });
  after(async () => {
    client.close();
    await server.close();
  });

  it("returns a text answer as it came, retrying a 500 like any request", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "default" },
      spec: { containers: [{ name: "c", image: "x" }] },
    });
    server.setPodLog("default", "p", "c", "line 1\n{not json}\n");
    server.faults.add({ path: /\/log$/, nth: 1, status: 500 });
    const text = await client.request<string>("GET", "/api/v1/namespaces/default/pods/p/log", {
      query: { container: "c" },
      response: "text",
    });
    expect(text).to.equal("line 1\n{not json}\n");
    expect(server.countRequests({ path: /\/log$/ })).to.equal(2);
  });

  it("lists a collection by path across continue pages", async () => {
    for (let i = 0; i < 7; i++)
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${i}`, namespace: "paged", labels: { k: "v" } },
      });
    server.resetRequests();
    const items = await client.listPath<{ metadata: { name: string } }>("/api/v1/namespaces/paged/configmaps", {
      labelSelector: "k=v",
      limit: 3,
    });
    expect(items.map((i) => i.metadata.name)).to.deep.equal(["cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5", "cm-6"]);
    expect(server.countRequests({ method: "GET" })).to.equal(3);
  });
});
