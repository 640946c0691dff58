import { expect } from "chai";
import {
  objectOfPath,
  resetServerWarnings,
  serverWarnings,
  WarningTeller,
  type ServerWarning,
} from "../../src/host/warnings.js";

describe("host/warnings: a client's own teller", () => {
  it("names the object of a request path, not of a collection", () => {
    expect(objectOfPath("/apis/apps/v1/namespaces/vc-a/statefulsets/a")).to.equal("statefulsets vc-a/a");
    expect(objectOfPath("/api/v1/namespaces/vc-a/configmaps/vc-status?fieldManager=vc")).to.equal(
      "configmaps vc-a/vc-status",
    );
    expect(objectOfPath("/api/v1/namespaces/vc-a/pods/p/log")).to.equal("pods vc-a/p");
    expect(objectOfPath("/api/v1/namespaces/vc-a")).to.equal("namespaces vc-a");
    expect(objectOfPath("/apis/rbac.authorization.k8s.io/v1/clusterroles/r")).to.equal("clusterroles r");
    expect(objectOfPath("/api/v1/namespaces/vc-a/configmaps")).to.equal(undefined);
    expect(objectOfPath("/apis/apps/v1/statefulsets")).to.equal(undefined);
  });

  it("tells each warning once per server, text and object through its own sink, never the process's", () => {
    resetServerWarnings();
    const a: ServerWarning[] = [];
    const b: ServerWarning[] = [];
    const ta = new WarningTeller((w) => a.push(w));
    const tb = new WarningTeller((w) => b.push(w));
    for (let i = 0; i < 2; i++) ta.tell("https://h", "PATCH", "/api/v1/namespaces/x/configmaps/one", ["deprecated"]);
    ta.tell("https://h", "PATCH", "/api/v1/namespaces/x/configmaps/two", ["deprecated"]);
    tb.tell("https://h", "PATCH", "/api/v1/namespaces/x/configmaps/one", ["deprecated"]);
    expect(a.map((w) => w.object)).to.deep.equal(["configmaps x/one", "configmaps x/two"]);
    expect(b.map((w) => w.object)).to.deep.equal(["configmaps x/one"]);
    expect(serverWarnings()).to.deep.equal([]);
  });
});
