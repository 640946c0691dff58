import { expect } from "chai";
import { load } from "js-yaml";
import type { KubeObject } from "../../src/kube/object.js";
import { renderCluster } from "../../src/render/index.js";
import { ANNOTATIONS, LABELS } from "../../src/translate/index.js";
import { at, find, makeSpec, must, withMesh } from "./fixtures.js";

const C = "team-a";
const HNS = "vc-team-a";
const render = (edit?: Parameters<typeof makeSpec>[1]) => renderCluster(makeSpec(C, edit), "rev1");
const syncer = (objs: KubeObject[]) => at(must(objs, "StatefulSet", C), "spec.template.spec.containers.0");
const decode = (s: string) => Buffer.from(s, "base64").toString("utf8");

describe("render/control plane", () => {
  it("labels and annotates every object with ownership, source file and revision", () => {
    const objs = render((v) => {
      withMesh(v);
      v.integrations.metricsServer.enabled = true;
      v.policies.resourceQuota.enabled = true;
      v.sync.fromHost.nodes.enabled = true;
      v.controlPlane.backingStore.database.external = { enabled: true, endpoint: "postgres://db" };
    });
    expect(objs.length).to.be.greaterThan(15);
    for (const o of objs) {
      const id = `${o.kind}/${o.metadata.name}`;
      expect(o.metadata.labels?.[LABELS.managedBy], id).to.equal(C);
      expect(o.metadata.labels?.[LABELS.inventory], id).to.equal(C);
      expect(o.metadata.annotations?.[ANNOTATIONS.sourceFile], id).to.equal("clusters/team-a/values.yaml");
      expect(o.metadata.annotations?.[ANNOTATIONS.revision], id).to.equal("rev1");
      if (o.kind !== "Namespace" && o.kind !== "ClusterRole" && o.kind !== "ClusterRoleBinding") {
        expect(o.metadata.namespace, id).to.equal(HNS);
      } else {
        expect(o.metadata.namespace, id).to.equal(undefined);
      }
    }
  });

  describe("Namespace", () => {
    it("is the host namespace, labelled for sidecar injection only while the mesh integration is on", () => {
      expect(must(render(), "Namespace").metadata.labels).to.not.have.property("mesh-injection");
      const on = must(render(withMesh), "Namespace");
      expect(on.metadata.name).to.equal(HNS);
      expect(on.metadata.labels!["mesh-injection"]).to.equal("enabled");
    });

    it("follows the host namespace of cluster.yaml", () => {
      const spec = makeSpec(C);
      spec.settings.namespace = "tenants-a";
      const objs = renderCluster(spec, "r");
      expect(must(objs, "Namespace").metadata.name).to.equal("tenants-a");
      expect(objs.filter((o) => o.kind !== "Namespace").every((o) => o.metadata.namespace === "tenants-a")).to.equal(
        true,
      );
    });
  });

  describe("StatefulSet", () => {
    it("runs the syncer with the values' image, replicas, resources, env, probe and service links", () => {
      const objs = render((v) => {
        v.controlPlane.statefulSet.replicas = 3;
        v.controlPlane.statefulSet.env = [
          { name: "DEBUG", value: "true" },
          { name: "LOG_LEVEL", value: "debug" },
        ];
        v.controlPlane.statefulSet.enableServiceLinks = false;
        v.controlPlane.statefulSet.probes.livenessProbe = {
          initialDelaySeconds: 30,
          periodSeconds: 10,
          failureThreshold: 3,
        };
        v.controlPlane.statefulSet.resources = { requests: { cpu: "500m", memory: "1Gi" }, limits: { memory: "4Gi" } };
      });
      const sts = must(objs, "StatefulSet", C);
      const pod = { release: C, app: "vc" };
      expect(at(sts, "spec.replicas")).to.equal(3);
      expect(at(sts, "spec.selector.matchLabels")).to.deep.equal(pod);
      expect(at(sts, "spec.template.metadata.labels")).to.deep.equal(pod);
      expect(at(sts, "spec.template.spec.serviceAccountName")).to.equal(`vc-${C}`);
      expect(at(sts, "spec.template.spec.enableServiceLinks")).to.equal(false);
      expect(at(sts, "spec.serviceName")).to.equal(`${C}-headless`);
      const c = syncer(objs);
      expect(c.name).to.equal("syncer");
      expect(c.image).to.equal("ghcr.io/vc-project/control-plane:0.1.0");
      expect(c.resources).to.deep.equal({ requests: { cpu: "500m", memory: "1Gi" }, limits: { memory: "4Gi" } });
      expect(c.env).to.deep.equal([
        { name: "DEBUG", value: "true" },
        { name: "LOG_LEVEL", value: "debug" },
      ]);
      expect(c.livenessProbe).to.deep.include({ initialDelaySeconds: 30, periodSeconds: 10, failureThreshold: 3 });
      expect(c.livenessProbe.httpGet).to.deep.equal({ path: "/healthz", port: 8443, scheme: "HTTPS" });
    });

    it("keeps data in an emptyDir without persistence, in a volume claim template with it", () => {
      const off = must(render(), "StatefulSet");
      expect(at(off, "spec.volumeClaimTemplates")).to.equal(undefined);
      expect(at(off, "spec.template.spec.volumes")).to.deep.include({ name: "data", emptyDir: {} });
      const on = must(
        render(
          (v) =>
            (v.controlPlane.backingStore.kvstore.persistence = {
              enabled: true,
              size: "20Gi",
              storageClass: "fast-ssd",
            }),
        ),
        "StatefulSet",
      );
      expect(at(on, "spec.volumeClaimTemplates")).to.deep.equal([
        {
          metadata: { name: "data" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            resources: { requests: { storage: "20Gi" } },
            storageClassName: "fast-ssd",
          },
        },
      ]);
      expect(at(on, "spec.template.spec.volumes").some((v: any) => v.name === "data")).to.equal(false);
      expect(at(on, "spec.template.spec.containers.0.volumeMounts")).to.deep.include({
        name: "data",
        mountPath: "/data",
      });
    });

    it("leaves storageClassName out when the storage class is empty (the host's default class)", () => {
      const on = must(
        render(
          (v) => (v.controlPlane.backingStore.kvstore.persistence = { enabled: true, size: "10Gi", storageClass: "" }),
        ),
        "StatefulSet",
      );
      expect(at(on, "spec.volumeClaimTemplates.0.spec")).to.not.have.property("storageClassName");
    });

    it("passes the backing store: embedded kvstore and the migration flag", () => {
      expect(syncer(render()).args).to.include.members([
        "--backing-store=embedded-kvstore",
        "--kvstore-data-dir=/data",
      ]);
      expect(syncer(render()).args).to.not.include("--migrate-from-deployed-kvstore");
      const mig = syncer(
        render((v) => (v.controlPlane.backingStore.kvstore.embedded.migrateFromDeployedKvstore = true)),
      );
      expect(mig.args).to.include("--migrate-from-deployed-kvstore");
      const deployed = syncer(render((v) => (v.controlPlane.backingStore.kvstore.embedded.enabled = false)));
      expect(deployed.args).to.include("--backing-store=deployed-kvstore");
    });

    it("takes an inline external database endpoint from a Secret vc renders, never in plain text", () => {
      const url = "postgres://admin:s3cr3t@db.example.com:5432/vc";
      const objs = render((v) => {
        v.controlPlane.backingStore.kvstore.embedded.enabled = false;
        v.controlPlane.backingStore.database.external = { enabled: true, endpoint: url };
      });
      const c = syncer(objs);
      expect(c.args).to.include("--backing-store=external-database");
      expect(c.env).to.deep.include({
        name: "VC_DATABASE_ENDPOINT",
        valueFrom: { secretKeyRef: { name: `vc-database-${C}`, key: "endpoint" } },
      });
      const secret = must(objs, "Secret", `vc-database-${C}`);
      expect(decode(at(secret, "data.endpoint"))).to.equal(url);
      const config = decode((must(objs, "Secret", `vc-config-${C}`).data as Record<string, string>)["values.yaml"]!);
      expect(config).to.not.include("s3cr3t");
      expect(JSON.stringify(objs)).to.not.include("s3cr3t");
    });

    it("refers to an existing Secret by endpointSecretRef and renders none of its own", () => {
      const objs = render((v) => {
        v.controlPlane.backingStore.database.external = {
          enabled: true,
          endpoint: "",
          endpointSecretRef: { name: "db-url", key: "url" },
        };
      });
      expect(syncer(objs).env).to.deep.include({
        name: "VC_DATABASE_ENDPOINT",
        valueFrom: { secretKeyRef: { name: "db-url", key: "url" } },
      });
      expect(find(objs, "Secret", `vc-database-${C}`)).to.equal(undefined);
    });

    it("rolls the pods when the mounted configuration changes", () => {
      const hash = (objs: KubeObject[]) =>
        at(must(objs, "StatefulSet"), "spec.template.metadata.annotations")[ANNOTATIONS.configHash];
      const a = hash(render());
      expect(a).to.match(/^[0-9a-f]{64}$/);
      expect(hash(render())).to.equal(a);
      expect(
        hash(render((v) => (v.policies.resourceQuota = { enabled: true, quota: { "limits.cpu": "8" } }))),
      ).to.not.equal(a);
    });
  });

  it("holds the effective values in the Secret vc-config-<cluster>", () => {
    const objs = render((v) => (v.sync.toHost.services.enabled = false));
    const data = must(objs, "Secret", `vc-config-${C}`).data as Record<string, string>;
    const values = load(decode(data["values.yaml"]!)) as any;
    expect(values.sync.toHost.services.enabled).to.equal(false);
    expect(values.controlPlane.statefulSet.replicas).to.equal(1);
    expect(syncer(objs).args).to.include("--config=/etc/vc/config/values.yaml");
  });

  it("exposes the virtual API server on Service <cluster> port 443 -> 8443, plus a headless Service", () => {
    const objs = render();
    const svc = must(objs, "Service", C);
    expect(at(svc, "spec.ports")).to.deep.equal([{ name: "https", port: 443, targetPort: 8443, protocol: "TCP" }]);
    expect(at(svc, "spec.selector")).to.deep.equal({ release: C, app: "vc" });
    expect(at(must(objs, "Service", `${C}-headless`), "spec.clusterIP")).to.equal("None");
    expect(must(objs, "ServiceAccount", `vc-${C}`).metadata.namespace).to.equal(HNS);
  });

  it("renders a ResourceQuota only when policies.resourceQuota.enabled", () => {
    expect(find(render(), "ResourceQuota")).to.equal(undefined);
    const quota = { "requests.cpu": "4", "requests.memory": "8Gi", "limits.cpu": "8", "limits.memory": "16Gi" };
    const rq = must(
      render((v) => (v.policies.resourceQuota = { enabled: true, quota })),
      "ResourceQuota",
      `vc-${C}`,
    );
    expect(at(rq, "spec.hard")).to.deep.equal(quota);
  });

  it(
    "puts a LimitRange with container defaults beside the quota, so pods without requests or limits are not " +
      "refused",
    () => {
      expect(find(render(), "LimitRange")).to.equal(undefined);
      const lr = must(
        render((v) => (v.policies.resourceQuota = { enabled: true, quota: { "limits.memory": "16Gi" } })),
        "LimitRange",
        `vc-${C}`,
      );
      expect(lr.metadata.namespace).to.equal(HNS);
      expect(at(lr, "spec.limits")).to.deep.equal([
        { type: "Container", default: { cpu: "1", memory: "512Mi" }, defaultRequest: { cpu: "100m", memory: "128Mi" } },
      ]);
    },
  );
});
