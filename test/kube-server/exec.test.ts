// pods/exec: the real `kubectl exec` reaches the test's handler over the websocket channel protocol, stdin, output and
// exit code.
import { expect } from "chai";
import WebSocket from "ws";
import { startKubeServer, type ExecSession, type KubeServer } from "../support/kube-server/index.js";
import { kubectl } from "../support/kubectl.js";

describe("kube-server: exec", function () {
  this.timeout(30_000);
  let server: KubeServer;
  const sessions: ExecSession[] = [];
  before(async () => {
    server = await startKubeServer();
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "box", namespace: "default" },
      spec: {
        containers: [
          { name: "main", image: "busybox" },
          { name: "debug", image: "busybox" },
        ],
      },
      status: { phase: "Running" },
    });
    server.onExec(handler);
  });
  after(async () => server.close());

  function handler(s: ExecSession): void {
    sessions.push(s);
    if (s.command[0] === "fail") {
      s.stderr.write("boom\n");
      s.exit(3);
      return;
    }
    const banner = `${s.container}: ${s.command.join(" ")}\n`;
    if (!s.stdin) {
      s.stdout.write(banner);
      return s.exit(0);
    }
    // With stdin, the banner goes out with the first input: kubectl sends it once its streams are up, so nothing
    // written before it reads them can be lost (kubectl before 1.34 dropped such output).
    let first = true;
    s.stdin.on("data", (d: Buffer) => {
      if (first) s.stdout.write(banner);
      first = false;
      s.stdout.write(d.toString().toUpperCase());
    });
    s.stdin.on("end", () => s.exit(0));
  }

  it("runs a command in the chosen container and streams stdin to the handler", async () => {
    const r = await kubectl(server, ["exec", "-i", "box", "-c", "debug", "--", "tr", "a-z", "A-Z"], {
      input: "hello\n",
    });
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

  it("reads terminal sizes whatever the case of their keys, as the API server does", async () => {
    const sizes: Array<{ width: number; height: number }> = [];
    server.onExec((s) => {
      s.onResize((size) => {
        sizes.push(size);
        if (sizes.length === 2) s.exit(0);
      });
    });
    const url = `${server.url.replace(/^http/, "ws")}/api/v1/namespaces/default/pods/box/exec?container=main&command=sh&stdin=true&stdout=true&tty=true`;
    const ws = new WebSocket(url, ["v4.channel.k8s.io"]);
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    ws.send(Buffer.concat([Buffer.from([4]), Buffer.from(JSON.stringify({ Width: 80, Height: 24 }))]));
    ws.send(Buffer.concat([Buffer.from([4]), Buffer.from(JSON.stringify({ width: 120, height: 40 }))]));
    await new Promise((resolve) => ws.once("close", resolve));
    server.onExec(handler);
    expect(sizes).to.deep.equal([
      { width: 80, height: 24 },
      { width: 120, height: 40 },
    ]);
  });

  it("refuses an unknown container", async () => {
    const r = await kubectl(server, ["exec", "box", "-c", "nope", "--", "true"]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include("container nope is not valid for pod box");
  });
});
