import { expect } from "chai";
import { CommanderError } from "commander";
import { UserError } from "../../src/model/errors.js";
import { type buildCommand, parseFlags, parseListen } from "../../src/metrics-proxy/config.js";

const base = ["--cluster", "a", "--host-namespace", "host"];

describe("metrics-proxy flags", () => {
  it("has the documented defaults", () => {
    expect(parseFlags(base)).to.deep.equal({
      cluster: "a",
      hostNamespace: "host",
      listen: { host: "", port: 9001 },
      apiGroup: "metrics.orch.io",
      hostApiGroup: "metrics.orch.io",
      cacheTtlMs: 15_000,
      apiService: "v1beta1.metrics.orch.io",
      authzCacheTtlMs: 10_000,
      authzTimeoutMs: 5_000,
      authzMaxInFlight: 16,
      authzMaxQueued: 256,
      refreshMs: 60_000,
      nodes: "synced",
      logLevel: "info",
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
    ]);
    expect(c).to.include({
      kubeconfig: "k",
      tlsCert: "c",
      tlsKey: "k2",
      clientCA: "ca",
      tokenFile: "t",
      apiGroup: "metrics.k8s.io",
      hostApiGroup: "metrics.k8s.io",
      cacheTtlMs: 90_000,
      nodes: "all",
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
      virtualKubeconfig: "vk",
      virtualServer: "https://a.vc-a.svc:443",
      apiService: "v1beta1.metrics.k8s.io",
      authzCacheTtlMs: 30_000,
      refreshMs: 120_000,
    });
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
      /goes with --virtual-kubeconfig/,
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
    expect(() => parseFlags(["--cluster", "a"], quiet)).to.throw(CommanderError, /host-namespace/);
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
    ]) {
      expect(help).to.contain(flag);
    }
  });
});
