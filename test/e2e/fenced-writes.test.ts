// The server-side fences vc's writes rely on, proven on a real API server: a write that carries the resourceVersion it
// was planned against (server-side apply, a merge patch, a delete's precondition) is refused with 409 once the object
// has changed since, and goes through while it has not.
import { expect } from "chai";
import { useRealKube } from "../support/real-kube.js";

const CM = "/api/v1/namespaces/fence/configmaps";

describe("e2e: writes fenced by resourceVersion on a real API server", function () {
  this.timeout(120_000);
  const kube = useRealKube();

  before(async () => {
    expect((await kube().kubectl(["create", "namespace", "fence"])).code).to.equal(0);
  });

  const create = async (name: string) => {
    const made = await kube().request<{ metadata: { resourceVersion: string } }>("POST", CM, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name },
      data: { v: "1" },
    });
    expect(made.status).to.equal(201);
    return made.body.metadata.resourceVersion;
  };
  const touch = async (name: string) => {
    const res = await kube().request(
      "PATCH",
      `${CM}/${name}`,
      { data: { other: "writer" } },
      {
        contentType: "application/merge-patch+json",
      },
    );
    expect(res.status).to.equal(200);
  };
  const apply = (name: string, resourceVersion: string, v: string) =>
    kube().request<{ reason?: string }>(
      "PATCH",
      `${CM}/${name}?fieldManager=vc&force=true`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "fence", resourceVersion }, data: { v } },
      { contentType: "application/apply-patch+yaml" },
    );

  it(
    "server-side apply carrying metadata.resourceVersion: 409 Conflict once the object changed, else " + "applied",
    async () => {
      const rv = await create("ssa");
      const fresh = await apply("ssa", rv, "2");
      expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
      // Planned against `rv`, but the object has changed since (the apply above): refused, nothing written.
      await touch("ssa");
      const stale = await apply("ssa", rv, "3");
      expect(stale.status).to.equal(409);
      expect(stale.body.reason).to.equal("Conflict");
      const live = await kube().request<{ data: Record<string, string> }>("GET", `${CM}/ssa`);
      expect(live.body.data.v).to.equal("2");
    },
  );

  it(
    "a merge patch carrying metadata.resourceVersion: 409 once the object changed (the records' " + "compare-and-swap)",
    async () => {
      const rv = await create("merge");
      await touch("merge");
      const stale = await kube().request<{ reason?: string }>(
        "PATCH",
        `${CM}/merge`,
        { metadata: { resourceVersion: rv }, data: { v: "2" } },
        { contentType: "application/merge-patch+json" },
      );
      expect(stale.status).to.equal(409);
      expect(stale.body.reason).to.equal("Conflict");
      const live = await kube().request<{ metadata: { resourceVersion: string }; data: Record<string, string> }>(
        "GET",
        `${CM}/merge`,
      );
      expect(live.body.data.v).to.equal("1");
      const current = await kube().request(
        "PATCH",
        `${CM}/merge`,
        { metadata: { resourceVersion: live.body.metadata.resourceVersion }, data: { v: "2" } },
        { contentType: "application/merge-patch+json" },
      );
      expect(current.status).to.equal(200);
    },
  );

  it("a delete with a resourceVersion precondition: 409 once the object changed, the object kept", async () => {
    const rv = await create("gone");
    await touch("gone");
    const stale = await kube().request("DELETE", `${CM}/gone`, {
      apiVersion: "v1",
      kind: "DeleteOptions",
      preconditions: { resourceVersion: rv },
    });
    expect(stale.status).to.equal(409);
    expect((await kube().request("GET", `${CM}/gone`)).status).to.equal(200);
  });
});
