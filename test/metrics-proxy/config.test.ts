import { expect } from "chai";
import { CommanderError } from "commander";
import { UserError } from "../../src/model/errors.js";
import { type buildCommand, parseFlags, parseListen } from "../../src/metrics-proxy/config.js";

const base = ["--cluster", "a", "--host-namespace", "host"];

describe("metrics-proxy flags", () => {
  it("has the documented defaults", () => {
    const shared = parseFlags(["--tls-cert", "c", "--tls-key", "k", "--replica-name", "r"]);
    expect(shared).to.deep.equal({
      mode: {
        kind: "shared",
        shared: {
          virtualServer: "https://{cluster}.{namespace}.svc:443",
          statusConfigMap: { namespace: "vc-system", name: "vc-metrics-proxy-status" },
          replica: "r",
          maxClusters: 10_000,
        },
      },
      listen: { host: "", port: 9001 },
      tlsCert: "c",
      tlsKey: "k",
      apiGroup: "metrics.orch.io",
      hostApiGroup: "metrics.orch.io",
      cacheTtlMs: 15_000,
      apiService: "v1beta1.metrics.orch.io",
      authzCacheTtlMs: 10_000,
      authzTimeoutMs: 5_000,
      authzMaxInFlight: 16,
      authzMaxQueued: 256,
      refreshMs: 60_000,
      maxPods: 250_000,
      maxPodsPerNamespace: 10_000,
      logLevel: "info",
    });
    expect(parseFlags(base).mode).to.deep.equal({
      kind: "single",
      single: { cluster: "a", hostNamespace: "host", nodes: "synced" },
    });
  });

  it("reads every flag", () => {
    const c = parseFlags([
      ...base,
      "--kubeconfig",
      "k",
      "--listen",
      "127.0.0.1:0",
      "--tls-cert",
      "c",
      "--tls-key",
      "k2",
      "--client-ca",
      "ca",
      "--token-file",
      "t",
      "--api-group",
      "metrics.k8s.io",
      "--host-api-group",
      "metrics.k8s.io",
      "--cache-ttl",
      "1m30s",
      "--nodes",
      "all",
      "--max-pods",
      "7",
      "--max-pods-per-namespace",
      "3",
    ]);
    expect(c).to.include({
      kubeconfig: "k",
      tlsCert: "c",
      tlsKey: "k2",
      apiGroup: "metrics.k8s.io",
      hostApiGroup: "metrics.k8s.io",
      cacheTtlMs: 90_000,
      maxPods: 7,
      maxPodsPerNamespace: 3,
    });
    expect(c.mode).to.deep.equal({
      kind: "single",
      single: { cluster: "a", hostNamespace: "host", nodes: "all", clientCA: "ca", tokenFile: "t" },
    });
    expect(c.listen).to.deep.equal({ host: "127.0.0.1", port: 0 });
    const v = parseFlags([
      ...base,
      "--tls-cert",
      "c",
      "--tls-key",
      "k",
      "--tls-ca",
      "ca",
      "--virtual-kubeconfig",
      "vk",
      "--virtual-server",
      "https://a.vc-a.svc:443",
      "--api-group",
      "metrics.k8s.io",
      "--authz-cache-ttl",
      "30s",
      "--refresh-interval",
      "2m",
    ]);
    expect(v).to.include({
      tlsCA: "ca",
      apiService: "v1beta1.metrics.k8s.io",
      authzCacheTtlMs: 30_000,
      refreshMs: 120_000,
    });
    expect(v.mode).to.deep.include({
      single: {
        cluster: "a",
        hostNamespace: "host",
        nodes: "synced",
        virtualKubeconfig: "vk",
        virtualServer: "https://a.vc-a.svc:443",
      },
    });
    const shared = parseFlags([
      ...["--tls-cert", "c", "--tls-key", "k", "--virtual-server", "kubeconfig", "--status-configmap", ""],
      ...["--max-clusters", "5", "--replica-name", "p-1"],
    ]);
    expect(shared.mode).to.deep.equal({
      kind: "shared",
      shared: { virtualServer: "kubeconfig", replica: "p-1", maxClusters: 5 },
    });
    expect(
      parseFlags(["--tls-cert", "c", "--tls-key", "k", "--status-configmap", "ops/status"]).mode,
    ).to.have.nested.property("shared.statusConfigMap.namespace", "ops");
    expect(parseFlags([...base, "--apiservice", ""]).apiService).to.equal("");
    expect(
      parseFlags([...base, "--authz-timeout", "750ms", "--authz-max-in-flight", "4", "--authz-max-queued", "0"]),
    ).to.include({ authzTimeoutMs: 750, authzMaxInFlight: 4, authzMaxQueued: 0 });
    expect(() => parseFlags([...base, "--authz-max-in-flight", "0"])).to.throw(
      UserError,
      /invalid --authz-max-in-flight "0"/,
    );
    expect(() => parseFlags([...base, "--authz-max-queued", "-1"])).to.throw(
      UserError,
      /invalid --authz-max-queued "-1"/,
    );
    expect(() => parseFlags([...base, "--authz-timeout", "0s"])).to.throw(UserError, /invalid --authz-timeout "0s"/);
  });

  it("the shared form: HTTPS required, no flags of one cluster, a virtual-server naming each cluster", () => {
    const tls = ["--tls-cert", "c", "--tls-key", "k"];
    expect(() => parseFlags([])).to.throw(UserError, /needs HTTPS/);
    for (const flag of ["--host-namespace", "--virtual-kubeconfig", "--client-ca", "--token-file"])
      expect(() => parseFlags([...tls, flag, "x"]), flag).to.throw(
        UserError,
        new RegExp(`${flag} goes with --cluster`),
      );
    expect(() => parseFlags([...tls, "--nodes", "all"])).to.throw(UserError, /--nodes goes with --cluster/);
    expect(() => parseFlags([...tls, "--virtual-server", "https://one.example:443"])).to.throw(
      UserError,
      /\{cluster\} and \{namespace\}/,
    );
    expect(() => parseFlags([...tls, "--virtual-server", "http://{cluster}:80"])).to.throw(UserError, /https/);
    expect(() => parseFlags([...tls, "--status-configmap", "just-a-name"])).to.throw(UserError, /NAMESPACE\/NAME/);
    expect(() => parseFlags([...tls, "--max-clusters", "0"])).to.throw(UserError, /--max-clusters/);
  });

  it("the front-proxy form: HTTPS required, no static credentials beside it, an https --virtual-server", () => {
    const tls = ["--tls-cert", "c", "--tls-key", "k"];
    expect(() => parseFlags([...base, "--virtual-kubeconfig", "vk"])).to.throw(
      UserError,
      /--virtual-kubeconfig needs HTTPS/,
    );
    expect(() => parseFlags([...base, ...tls, "--virtual-kubeconfig", "vk", "--client-ca", "ca"])).to.throw(
      UserError,
      /leave out --client-ca and --token-file/,
    );
    expect(() => parseFlags([...base, ...tls, "--virtual-kubeconfig", "vk", "--token-file", "t"])).to.throw(
      UserError,
      /leave out/,
    );
    expect(() => parseFlags([...base, ...tls, "--virtual-server", "https://x"])).to.throw(
      UserError,
      /with --cluster, --virtual-server goes with --virtual-kubeconfig/,
    );
    expect(() =>
      parseFlags([...base, ...tls, "--virtual-kubeconfig", "vk", "--virtual-server", "http://x:80"]),
    ).to.throw(UserError, /--virtual-server/);
    expect(() => parseFlags([...base, "--tls-ca", "ca"])).to.throw(UserError, /--tls-ca/);
    expect(() => parseFlags([...base, "--apiservice", "metrics"])).to.throw(UserError, /--apiservice/);
    expect(() => parseFlags([...base, "--refresh-interval", "10ms"])).to.throw(UserError, /--refresh-interval/);
  });

  it("parses listen addresses", () => {
    expect(parseListen("[::1]:9001")).to.deep.equal({ host: "::1", port: 9001 });
    expect(parseListen("0.0.0.0:80")).to.deep.equal({ host: "0.0.0.0", port: 80 });
    expect(() => parseListen("9001")).to.throw(UserError, /--listen/);
    expect(() => parseListen(":70000")).to.throw(UserError);
  });

  it("rejects bad combinations with a message naming the flag", () => {
    expect(() => parseFlags([...base, "--tls-cert", "c"])).to.throw(UserError, /--tls-key/);
    expect(() => parseFlags([...base, "--client-ca", "ca"])).to.throw(UserError, /HTTPS/);
    expect(() => parseFlags(["--cluster", "A_B", "--host-namespace", "h"])).to.throw(UserError, /--cluster/);
    expect(() => parseFlags([...base, "--api-group", "metrics"])).to.throw(UserError, /--api-group/);
  });

  it("fails on missing required flags and unknown choices through commander, and has --help", () => {
    const quiet = (cmd: ReturnType<typeof buildCommand>) =>
      cmd.configureOutput({ writeErr: () => {}, writeOut: () => {} });
    expect(() => parseFlags(["--cluster", "a"], quiet)).to.throw(UserError, /--cluster needs --host-namespace/);
    expect(() => parseFlags([...base, "--nodes", "some"], quiet)).to.throw(CommanderError, /synced/);
    let help = "";
    expect(() => parseFlags(["--help"], (cmd) => cmd.configureOutput({ writeOut: (s) => (help += s) }))).to.throw(
      CommanderError,
    );
    for (const flag of [
      "--cluster",
      "--host-namespace",
      "--kubeconfig",
      "--listen",
      "--tls-cert",
      "--tls-key",
      "--client-ca",
      "--token-file",
      "--api-group",
      "--cache-ttl",
      "--nodes",
      "--virtual-kubeconfig",
      "--virtual-server",
      "--tls-ca",
      "--apiservice",
      "--authz-cache-ttl",
      "--refresh-interval",
      "--status-configmap",
      "--replica-name",
      "--max-clusters",
      "--max-pods",
      "--max-pods-per-namespace",
    ]) {
      expect(help).to.contain(flag);
    }
  });
});
