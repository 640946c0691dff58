// pods/log over HTTP: container choice, previous, tailLines, and upstream's errors.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call } from "./helpers.js";

const LOG = "/api/v1/namespaces/default/pods";

describe("kube-server: pod logs", () => {
  let server: KubeServer;
  before(async () => {
    server = await startKubeServer();
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "one", namespace: "default" },
      spec: { containers: [{ name: "app", image: "x" }] },
    });
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "two", namespace: "default" },
      spec: {
        containers: [
          { name: "a", image: "x" },
          { name: "b", image: "x" },
        ],
      },
    });
    server.setPodLog("default", "one", "app", "1\n2\n3\n");
    server.setPodLog("default", "two", "b", "old\n", { previous: true });
  });
  after(async () => server.close());

  it("serves plain text of the only container, with tailLines", async () => {
    const r = await call(server, "GET", `${LOG}/one/log`);
    expect(r.status).to.equal(200);
    expect(r.headers.get("content-type")).to.equal("text/plain");
    expect(r.text).to.equal("1\n2\n3\n");
    expect((await call(server, "GET", `${LOG}/one/log?tailLines=1`)).text).to.equal("3\n");
  });

  it("asks for a container when the pod has several, and serves previous logs", async () => {
    const r = await call(server, "GET", `${LOG}/two/log`);
    expect(r.status).to.equal(400);
    expect(r.body.message).to.equal("a container name must be specified for pod two, choose one of: [a b]");
    expect((await call(server, "GET", `${LOG}/two/log?container=b&previous=true`)).text).to.equal("old\n");
    expect((await call(server, "GET", `${LOG}/two/log?container=a`)).text).to.equal("");
    expect((await call(server, "GET", `${LOG}/two/log?container=a&previous=true`)).status).to.equal(400);
    expect((await call(server, "GET", `${LOG}/two/log?container=zzz`)).body.message).to.equal(
      "container zzz is not valid for pod two",
    );
  });

  it("answers 404 for a missing pod", async () => {
    const r = await call(server, "GET", `${LOG}/ghost/log`);
    expect(r.status).to.equal(404);
    expect(r.body.message).to.equal('pods "ghost" not found');
  });
});
