// pods/exec: the real `kubectl exec` reaches the test's handler over the websocket channel protocol, stdin, output and exit code.
import { expect } from "chai";
import { startKubeServer, type ExecSession, type KubeServer } from "../support/kube-server/index.js";
import { kubectl } from "../support/kubectl.js";

describe("kube-server: exec", function () {
  this.timeout(30_000);
  let server: KubeServer;
  const sessions: ExecSession[] = [];
  before(async () => {
    server = await startKubeServer();
    server.put({ apiVersion: "v1", kind: "Pod", metadata: { name: "box", namespace: "default" }, spec: { containers: [{ name: "main", image: "busybox" }, { name: "debug", image: "busybox" }] }, status: { phase: "Running" } });
    server.onExec((s) => {
      sessions.push(s);
      if (s.command[0] === "fail") {
        s.stderr.write("boom\n");
        s.exit(3);
        return;
      }
      s.stdout.write(`${s.container}: ${s.command.join(" ")}\n`);
      if (!s.stdin) return s.exit(0);
      s.stdin.on("data", (d: Buffer) => s.stdout.write(d.toString().toUpperCase()));
      s.stdin.on("end", () => s.exit(0));
    });
  });
  after(async () => server.close());

  it("runs a command in the chosen container and streams stdin to the handler", async () => {
    const r = await kubectl(server, ["exec", "-i", "box", "-c", "debug", "--", "tr", "a-z", "A-Z"], { input: "hello\n" });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal("debug: tr a-z A-Z\nHELLO\n");
    const s = sessions.at(-1)!;
    expect(s).to.include({ namespace: "default", pod: "box", container: "debug", tty: false });
    expect(s.command).to.deep.equal(["tr", "a-z", "A-Z"]);
    expect(server.countRequests({ resource: "pods/exec" })).to.equal(1);
  });

  it("passes the exit code and stderr back to kubectl", async () => {
    const r = await kubectl(server, ["exec", "box", "-c", "main", "--", "fail"]);
    expect(r.code).to.equal(3);
    expect(r.stderr).to.include("boom");
    expect(r.stderr).to.include("command terminated with exit code 3");
  });

  it("refuses an unknown container", async () => {
    const r = await kubectl(server, ["exec", "box", "-c", "nope", "--", "true"]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include("container nope is not valid for pod box");
  });
});
