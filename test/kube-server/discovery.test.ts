// Discovery: /version, /api, /apis, group and group-version documents, aggregated discovery v2, openapi for kubectl.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { describeProfiles } from "../support/profiles.js";
import { call } from "./helpers.js";

const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

describeProfiles("kube-server: discovery", (profile) => {
  let server: KubeServer;
  before(async () => {
    server = await startKubeServer({ profile });
  });
  after(async () => server.close());

  it("answers /version, /api and /apis in the plain forms", async () => {
    expect((await call(server, "GET", "/version")).body).to.include({
      major: "1",
      minor: profile === "1.20" ? "20" : "36",
    });
    const api = (await call(server, "GET", "/api")).body;
    expect(api).to.deep.include({ kind: "APIVersions", versions: ["v1"] });
    const apis = (await call(server, "GET", "/apis")).body;
    const apps = apis.groups.find((g: any) => g.name === "apps");
    expect(apps).to.deep.equal({
      name: "apps",
      versions: [{ groupVersion: "apps/v1", version: "v1" }],
      preferredVersion: { groupVersion: "apps/v1", version: "v1" },
    });
    expect((await call(server, "GET", "/apis/networking.mesh.io")).body).to.deep.include({
      kind: "APIGroup",
      name: "networking.mesh.io",
    });
    expect((await call(server, "GET", "/apis/unknown.io")).status).to.equal(404);
  });

  it("lists resources with verbs, short names, categories and subresources", async () => {
    const apps = (await call(server, "GET", "/apis/apps/v1")).body;
    expect(apps).to.include({ kind: "APIResourceList", groupVersion: "apps/v1" });
    const deploy = apps.resources.find((r: any) => r.name === "deployments");
    expect(deploy).to.deep.include({
      singularName: "deployment",
      namespaced: true,
      kind: "Deployment",
      shortNames: ["deploy"],
      categories: ["all"],
    });
    expect(deploy.verbs).to.include.members(["create", "delete", "get", "list", "patch", "update", "watch"]);
    expect(apps.resources.find((r: any) => r.name === "deployments/scale")).to.deep.include({
      kind: "Scale",
      group: "autoscaling",
      version: "v1",
      verbs: ["get", "patch", "update"],
    });
    const metrics = (await call(server, "GET", "/apis/metrics.orch.io/v1beta1")).body;
    expect(metrics.resources.map((r: any) => `${r.name}:${r.kind}:${r.verbs.join("/")}`)).to.deep.equal([
      "pods:PodMetrics:get/list",
      "nodes:NodeMetrics:get/list",
    ]);
    const core = (await call(server, "GET", "/api/v1")).body;
    expect(core.resources.find((r: any) => r.name === "pods/log")).to.deep.include({ kind: "Pod", verbs: ["get"] });
  });

  it(
    "serves aggregated discovery v2 when asked (current), the legacy list to the same Accept on 1.20, and 406 " +
      "without a fallback",
    async () => {
      if (profile === "1.20") {
        const legacy = await call(server, "GET", "/apis", undefined, { accept: AGGREGATED });
        expect(legacy.headers.get("content-type")).to.equal("application/json");
        expect(legacy.body.kind).to.equal("APIGroupList");
        const refused = await call(server, "GET", "/apis", undefined, {
          accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        });
        expect(refused.status).to.equal(406);
        expect(refused.body).to.include({ reason: "NotAcceptable" });
        return;
      }
      const r = await call(server, "GET", "/apis", undefined, { accept: AGGREGATED });
      expect(r.headers.get("content-type")).to.equal(
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
      );
      expect(r.body).to.include({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2" });
      const mesh = r.body.items.find((i: any) => i.metadata.name === "networking.mesh.io");
      const vs = mesh.versions[0].resources.find((x: any) => x.resource === "virtualservices");
      expect(vs).to.deep.include({
        responseKind: { group: "networking.mesh.io", version: "v1beta1", kind: "VirtualService" },
        scope: "Namespaced",
        singularResource: "virtualservice",
        shortNames: ["vs"],
      });
      const core = await call(server, "GET", "/api", undefined, { accept: AGGREGATED });
      const pods = core.body.items[0].versions[0].resources.find((x: any) => x.resource === "pods");
      expect(pods.subresources.map((s: any) => s.subresource)).to.deep.equal(["status", "log"]);
    },
  );

  it("serves SelfSubjectReview from 1.28 on: listed and answered on current, absent (404) on 1.20", async () => {
    const apis = (await call(server, "GET", "/apis")).body;
    const listed = apis.groups.some((g: any) => g.name === "authentication.k8s.io");
    const review = await call(server, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      apiVersion: "authentication.k8s.io/v1",
      kind: "SelfSubjectReview",
    });
    if (profile === "1.20") {
      expect(listed).to.equal(false);
      expect(review.status).to.equal(404);
    } else {
      expect(listed).to.equal(true);
      expect(review.status).to.equal(201);
      expect(review.body.status.userInfo.username).to.equal("admin");
    }
  });

  it("serves health paths and /metrics with upstream's request series", async () => {
    expect((await call(server, "GET", "/healthz")).text).to.equal("ok");
    expect((await call(server, "GET", "/readyz")).status).to.equal(200);
    await call(server, "GET", "/api/v1/namespaces/default/configmaps");
    await call(server, "GET", "/apis/apps/v1/namespaces/default/deployments/none");
    const text = (await call(server, "GET", "/metrics")).text;
    expect(text).to.match(
      /^apiserver_request_total\{verb="LIST",group="",resource="configmaps",subresource="",scope="namespace",code="200"\} 1$/m,
    );
    expect(text).to.match(
      /^apiserver_request_total\{verb="GET",group="apps",resource="deployments",subresource="",scope="resource",code="404"\} 1$/m,
    );
    expect(text).to.match(
      /^apiserver_request_duration_seconds_bucket\{le="0.005",verb="LIST",group="",resource="configmaps"/m,
    );
  });

  it(
    "advertises fieldValidation on PATCH in openapi v3 (none on 1.20: 404) and serves a protobuf v2 " + "document",
    async () => {
      const v2 = await fetch(`${server.url}/openapi/v2`);
      // 1.20 answers the protobuf document as application/octet-stream (checked with kubectl -v=8 on the real server).
      expect(v2.headers.get("content-type")).to.equal(
        profile === "1.20" ? "application/octet-stream" : "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
      );
      expect(Buffer.from(await v2.arrayBuffer()).subarray(0, 5)).to.deep.equal(
        Buffer.from([0x0a, 0x03, 0x32, 0x2e, 0x30]),
      );
      if (profile === "1.20") {
        expect((await call(server, "GET", "/openapi/v3")).status).to.equal(404);
        expect((await call(server, "GET", "/openapi/v3/apis/apps/v1")).status).to.equal(404);
        return;
      }
      const root = (await call(server, "GET", "/openapi/v3")).body;
      expect(root.paths["apis/apps/v1"].serverRelativeURL).to.match(
        /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{32}$/,
      );
      const doc = (await call(server, "GET", root.paths["apis/apps/v1"].serverRelativeURL)).body;
      const patch = doc.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch;
      expect(patch["x-kubernetes-group-version-kind"]).to.deep.equal({
        group: "apps",
        version: "v1",
        kind: "Deployment",
      });
      expect(patch.parameters.map((p: any) => p.name)).to.include("fieldValidation");
    },
  );
});
