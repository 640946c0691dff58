import { expect } from "chai";
import { spawn, execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { addPod, get, HOST_NS, startHost, type KubeServer } from "./fixture.js";

const BIN = fileURLToPath(new URL("../../bin/vc-metrics-proxy.js", import.meta.url));
const run = promisify(execFile);

describe("vc-metrics-proxy (the bin, as a process)", function () {
  this.timeout(30_000);
  let server: KubeServer;
  before(async () => {
    server = await startHost();
    await addPod(server, { cluster: "a", namespace: "default", name: "web", cpu: "11m" });
  });
  after(async () => {
    await server?.close();
  });

  it("serves with JSON logs, warns about plain HTTP and open access on stderr, and stops on SIGTERM", async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        "--cluster",
        "a",
        "--host-namespace",
        HOST_NS,
        "--kubeconfig",
        server.kubeconfigPath,
        "--listen",
        "127.0.0.1:0",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    let stdout = "";
    child.stdout!.on("data", (c) => (stdout += c));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on("data", (c) => {
        stderr += c;
        const m = /"msg":"listening","url":"([^"]+)"/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const res = await get(url, "/apis/metrics.orch.io/v1beta1/namespaces/default/pods/web");
    expect(res.status).to.equal(200);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).to.equal(0);
    const lines = stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(
      lines.every((l) => typeof l.time === "string" && typeof l.level === "string" && typeof l.msg === "string"),
    ).to.equal(true);
    expect(lines.some((l) => l.level === "warn" && /plain HTTP/.test(l.msg))).to.equal(true);
    expect(lines.some((l) => l.level === "warn" && /authentication is off/.test(l.msg))).to.equal(true);
    expect(stdout).to.equal("");
  });

  it("exits 2 with a clear message on bad flags and an unreadable kubeconfig; --help exits 0", async () => {
    const fail = async (...args: string[]) => {
      try {
        await run(process.execPath, [BIN, ...args]);
        return { code: 0, stderr: "" };
      } catch (err: any) {
        return { code: err.code as number, stderr: err.stderr as string };
      }
    };
    let r = await fail("--cluster", "a");
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain("--host-namespace");
    r = await fail("--cluster", "a", "--host-namespace", "h", "--kubeconfig", "/does/not/exist");
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/^error: cannot use the host kubeconfig \/does\/not\/exist/);
    r = await fail("--cluster", "a", "--host-namespace", "h", "--tls-cert", "c");
    expect(r.stderr).to.contain("--tls-cert and --tls-key go together");
    const help = await run(process.execPath, [BIN, "--help"]);
    expect(help.stdout).to.contain("Usage: vc-metrics-proxy");
  });
});
