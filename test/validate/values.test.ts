import { expect } from "chai";
import { effectiveValues, validateValuesDocument } from "../../src/validate/values.js";

const F = "clusters/a/values.yaml";

describe("validate/values", () => {
  it("fills every default from the schema", () => {
    const v = effectiveValues({});
    expect(v.integrations.mesh.enabled).to.equal(false);
    expect(v.integrations.mesh.sync.toHost.gateways.enabled).to.equal(true);
    expect(v.controlPlane.statefulSet.probes.livenessProbe).to.deep.equal({
      initialDelaySeconds: 60,
      periodSeconds: 20,
      failureThreshold: 5,
    });
    expect(v.controlPlane.statefulSet.resources.requests).to.deep.equal({ cpu: "200m", memory: "512Mi" });
    expect(v.controlPlane.backingStore.kvstore.persistence.size).to.equal("10Gi");
    expect(v.integrations.metricsServer.proxy.replicas).to.equal(1);
    expect(v.deploy.metricsServer.enabled).to.equal(false);
    expect(v.privateNodes.enabled).to.equal(false);
    expect(v.sync.fromHost.nodes).to.deep.equal({ enabled: false, all: false });
  });

  it("keeps what is set and does not modify its input", () => {
    const raw = { integrations: { mesh: { enabled: true } } };
    const v = effectiveValues(raw);
    expect(v.integrations.mesh.enabled).to.equal(true);
    expect(raw).to.deep.equal({ integrations: { mesh: { enabled: true } } });
  });

  it("throws on invalid input", () => {
    expect(() => effectiveValues({ controlPlane: { statefulSet: { replicas: "two" } } })).to.throw(
      /replicas must be an integer/,
    );
  });

  it("reports an unknown key at its line with a did-you-mean", () => {
    const d = validateValuesDocument("integrations:\n  mesh:\n    enabeld: true\n", F);
    expect(d).to.deep.equal([
      {
        file: F,
        line: 3,
        col: 5,
        severity: "error",
        code: "schema",
        message: 'unknown key "enabeld" in integrations.mesh: did you mean "enabled"?',
      },
    ]);
  });

  it("suggests the full path of a key written one or more levels too high", () => {
    const [d] = validateValuesDocument(
      "integrations:\n  mesh:\n    enabled: true\n    virtualServices:\n      enabled: false\n",
      F,
    );
    expect(d!.message).to.equal(
      'unknown key "virtualServices" in integrations.mesh: did you mean "sync.toHost.virtualServices"?',
    );
    expect(d!.line).to.equal(4);
  });

  it("lists the known keys when nothing is close", () => {
    const [d] = validateValuesDocument("privateNodes:\n  zzzzzzzz: 1\n", F);
    expect(d!.message).to.equal('unknown key "zzzzzzzz" in privateNodes (known keys: enabled)');
  });

  it("checks quantities, types and env entries, pointing at the offending key", () => {
    const text = `controlPlane:
  statefulSet:
    resources:
      requests:
        cpu: 2 cores
        memory: 512
    env:
      - name: DEBUG
    replicas: 0
`;
    const d = validateValuesDocument(text, F).map((x) => [x.line, x.message]);
    expect(d).to.deep.equal([
      [
        5,
        'invalid quantity "2 cores" at controlPlane.statefulSet.resources.requests.cpu: use forms like 200m, 1, 512Mi, 2Gi',
      ],
      [
        6,
        'controlPlane.statefulSet.resources.requests.memory must be a quantity string such as "200m", "512Mi" or "2Gi", got number 512 (quote numbers)',
      ],
      [8, 'missing required key "value" in controlPlane.statefulSet.env[0]'],
      [9, "controlPlane.statefulSet.replicas must be >= 1, got 0"],
    ]);
  });

  it("checks the storage class as a StorageClass name, which the server would refuse; empty is the default", () => {
    const at = (storageClass: string) =>
      validateValuesDocument(
        `controlPlane:\n  backingStore:\n    kvstore:\n      persistence:\n        enabled: true\n` +
          `        storageClass: ${JSON.stringify(storageClass)}\n`,
        F,
      ).map((x) => [x.line, x.severity, x.message]);
    expect(at("Not_A_Name")).to.deep.equal([
      [
        6,
        "error",
        'invalid storage class "Not_A_Name" at controlPlane.backingStore.kvstore.persistence.storageClass: ' +
          'a StorageClass name is a DNS-1123 subdomain (lower-case letters, digits, "-" and "."; ' +
          "kubectl get storageclass lists them), or empty for the default class",
      ],
    ]);
    expect(at("fast-ssd")).to.deep.equal([]);
    expect(at("ebs.csi.aws.com-gp3")).to.deep.equal([]);
    expect(at("")).to.deep.equal([]);
    expect(at(`a${".b".repeat(130)}`).map(([line]) => line)).to.deep.equal([6]);
  });

  it("rejects a mesh resource in customResources while the mesh integration is on, with the spec's text", () => {
    const text = `integrations:
  mesh:
    enabled: true
sync:
  toHost:
    customResources:
      virtualservices.networking.mesh.io:
        enabled: true
`;
    const d = validateValuesDocument(text, F);
    expect(d).to.have.length(1);
    expect(d[0]).to.include({ line: 7, col: 7, severity: "error", code: "mesh-conflict" });
    expect(d[0]!.message).to.contain(
      "the mesh integration is enabled but the mesh custom resource is also set in `sync.toHost.customResources`",
    );
    expect(d[0]!.message).to.contain('"virtualservices.networking.mesh.io"');
    expect(d[0]!.message).to.contain("remove the entry and use `integrations.mesh`");
  });

  it(
    "matches a mesh resource in customResources however it is spelled: singular, plural or short name, with a " +
      "version; other spellings are schema errors",
    () => {
      const text = (key: string) =>
        `integrations: {mesh: {enabled: true}}\nsync: {toHost: {customResources: {${JSON.stringify(key)}: {enabled: ` +
        `true}}}}\n`;
      for (const key of [
        "virtualservice.networking.mesh.io",
        "virtualservices.v1beta1.networking.mesh.io",
        "vs.networking.mesh.io",
        "destinationrule.networking.mesh.io",
        "dr.v1beta1.networking.mesh.io",
        "gateway.networking.mesh.io",
        "gw.networking.mesh.io",
      ]) {
        const d = validateValuesDocument(text(key), F);
        expect(
          d.map((x) => x.code),
          key,
        ).to.deep.equal(["mesh-conflict"]);
        expect(d[0]!.message).to.contain(`"${key}"`);
      }
      // Not of the <plural>.<group> form: refused by the schema, never silently synced.
      for (const key of ["virtualservices", "VirtualService", "VirtualService.networking.mesh.io"]) {
        expect(
          validateValuesDocument(text(key), F).map((x) => x.severity),
          key,
        ).to.deep.equal(["error"]);
      }
      for (const other of [
        "virtualservices.networking.other.io",
        "gatewayclasses.gateway.networking.k8s.io",
        "vs.example.com",
      ]) {
        expect(
          validateValuesDocument(text(other), F).map((x) => x.code),
          other,
        ).to.deep.equal([]);
      }
    },
  );

  it(
    "warns that certificates.cert-manager.io in customResources is redundant while the certificate-manager " +
      "integration is on",
    () => {
      const text = (on: boolean) =>
        `integrations: {certManager: {enabled: ${on}}}\nsync: {toHost: {customResources: ` +
        `{certificates.cert-manager.io: {enabled: true}, widgets.example.com: {enabled: true}}}}\n`;
      const d = validateValuesDocument(text(true), F);
      expect(d.map((x) => [x.line, x.severity, x.code])).to.deep.equal([[2, "warning", "certmanager-conflict"]]);
      expect(d[0]!.message).to.contain(
        '"certificates.cert-manager.io" is redundant; remove it and use `integrations.certManager`',
      );
      expect(validateValuesDocument(text(false), F)).to.deep.equal([]);
    },
  );

  it("accepts the same custom resource while the mesh integration is off, and other resources while it is on", () => {
    expect(
      validateValuesDocument(
        "sync:\n  toHost:\n    customResources:\n      gateways.networking.mesh.io:\n        enabled: true\n",
        F,
      ),
    ).to.deep.equal([]);
    expect(
      validateValuesDocument(
        `integrations: {mesh: {enabled: true}}\nsync: {toHost: {customResources: {certificates.cert-manager.io: ` +
          `{enabled: true}}}}\n`,
        F,
      ),
    ).to.deep.equal([]);
  });

  it("rejects the mesh integration in private nodes mode", () => {
    const d = validateValuesDocument("privateNodes:\n  enabled: true\nintegrations:\n  mesh:\n    enabled: true\n", F);
    expect(d.map((x) => [x.line, x.code])).to.deep.equal([[5, "mesh-private-nodes"]]);
    expect(d[0]!.message).to.contain("not supported in private nodes mode");
  });

  it("rejects the metrics integration together with the built-in metrics server", () => {
    const d = validateValuesDocument(
      "integrations:\n  metricsServer:\n    enabled: true\ndeploy:\n  metricsServer:\n    enabled: true\n",
      F,
    );
    expect(d.map((x) => [x.line, x.code])).to.deep.equal([[6, "metrics-conflict"]]);
  });

  it("warns on the metrics integration in private nodes mode, and when it proxies nothing", () => {
    const d = validateValuesDocument(
      "privateNodes: {enabled: true}\nintegrations:\n  metricsServer:\n    enabled: true\n    pods: false\n    " +
        "nodes: false\n",
      F,
    );
    expect(d.map((x) => [x.line, x.severity, x.code])).to.deep.equal([
      [4, "warning", "metrics-private-nodes"],
      [4, "warning", "metrics-empty"],
    ]);
  });

  it("warns that the proxy's image, replicas and cache TTL no longer apply (one shared proxy serves the host)", () => {
    const d = validateValuesDocument(
      "integrations:\n  metricsServer:\n    enabled: true\n    proxy:\n      replicas: 2\n      cacheTTL: 30s\n" +
        "      hostApiGroup: metrics.k8s.io\n",
      F,
    );
    expect(d.map((x) => [x.line, x.severity, x.code])).to.deep.equal([[5, "warning", "metrics-proxy-shared"]]);
    expect(d[0]!.message).to.match(/^integrations\.metricsServer\.proxy\.replicas, \.cacheTTL no longer apply/);
    expect(validateValuesDocument("integrations:\n  metricsServer:\n    enabled: true\n", F)).to.deep.equal([]);
  });

  it("requires a connection for the external database and one backing store", () => {
    const none = validateValuesDocument(
      "controlPlane:\n  backingStore:\n    database:\n      external:\n        enabled: true\n",
      F,
    );
    expect(none.map((x) => x.code)).to.deep.equal(["database-endpoint"]);
    const both = validateValuesDocument(
      "controlPlane:\n  backingStore:\n    kvstore:\n      embedded:\n        enabled: true\n    database:\n      " +
        "external:\n        enabled: true\n        endpoint: postgres://db\n",
      F,
    );
    expect(both.map((x) => [x.line, x.code])).to.deep.equal([[5, "backing-store"]]);
  });

  it("never repeats the database endpoint or secret-looking env values in messages", () => {
    const text =
      "controlPlane:\n  statefulSet:\n    env:\n      - name: DB_PASSWORD\n        value: 912873465\n  " +
      "backingStore:\n    database:\n      external:\n        enabled: true\n        endpoint: 4242424242\n";
    const d = validateValuesDocument(text, F);
    expect(d.map((x) => x.line)).to.deep.equal([5, 10]);
    for (const x of d) {
      expect(x.message).to.contain("<masked>");
      expect(x.message).not.to.match(/912873465|4242424242/);
    }
  });

  it("rejects a document that is not a mapping, several documents and broken YAML; warns on an empty file", () => {
    expect(validateValuesDocument("- a\n- b\n", F).map((x) => x.code)).to.deep.equal(["not-a-mapping"]);
    expect(validateValuesDocument("a: 1\n---\nb: 2\n", F).map((x) => x.code)).to.deep.equal(["values-documents"]);
    expect(validateValuesDocument("a: [\n", F).map((x) => x.code)).to.deep.equal(["yaml-syntax"]);
    expect(validateValuesDocument("", F).map((x) => [x.severity, x.code])).to.deep.equal([["warning", "empty-file"]]);
  });

  it("accepts the spec's suggested values", () => {
    const text = `controlPlane:
  statefulSet:
    resources:
      requests: {cpu: 500m, memory: 1Gi}
      limits: {cpu: 2000m, memory: 4Gi}
    env:
      - {name: DEBUG, value: "true"}
      - {name: LOG_LEVEL, value: debug}
    probes:
      livenessProbe: {initialDelaySeconds: 60, periodSeconds: 20, failureThreshold: 5}
    enableServiceLinks: false
  backingStore:
    kvstore:
      embedded: {enabled: true, migrateFromDeployedKvstore: true}
      persistence: {enabled: true, size: 10Gi, storageClass: fast}
policies:
  resourceQuota:
    enabled: true
    quota: {requests.cpu: "4", requests.memory: 8Gi, limits.cpu: "8", limits.memory: 16Gi}
integrations:
  certManager: {enabled: true}
  mesh:
    enabled: true
    sync: {toHost: {destinationRules: {enabled: false}, gateways: {enabled: true}, virtualServices: {enabled: true}}}
`;
    expect(validateValuesDocument(text, F)).to.deep.equal([]);
  });
});
