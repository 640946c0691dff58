// The global --request-timeout: every command that reads the host fails within it, and says which server and which
// flag.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRequestTimeout } from "../../src/model/duration.js";
import { runVc } from "../support/vc.js";
import { freePort } from "../support/requires.js";
import { kubeconfigFor, silentServer } from "../support/silent-server.js";

describe("vc --request-timeout", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "vc-timeout-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads kubectl's syntax: seconds, a duration, or 0 for no limit", () => {
    expect(parseRequestTimeout("30")).to.equal(30_000);
    expect(parseRequestTimeout("0")).to.equal(0);
    expect(parseRequestTimeout("1m30s")).to.equal(90_000);
    expect(parseRequestTimeout("500ms")).to.equal(500);
    expect(() => parseRequestTimeout("soon")).to.throw(/invalid --request-timeout "soon"/);
  });

  for (const [where, args] of [
    ["after the command", ["status", "--target", "kube", "--request-timeout", "1s"]],
    ["before the command", ["--request-timeout", "1", "status", "--target", "kube"]],
  ] as const) {
    it(`vc status against a server that never answers fails within the timeout (flag ${where})`, async () => {
      const silent = await silentServer();
      try {
        // The server holds the request open and never answers: vc ending at all is the timeout working (the test's
        // own timeout catches a hang); how long the process took to start and stop is the machine's, not vc's.
        const res = await runVc([...args, "--kubeconfig", kubeconfigFor(dir, silent.url)]);
        expect(res.code).to.equal(2);
        expect(res.stderr).to.match(
          new RegExp(
            // vc's first request: the records namespace (its platform mark), then its records.
            `^error: the API server ${silent.url.replace(/\./g, "\\.")} did not answer ` +
              "GET /api/v1/namespaces/vc-system(?:/configmaps\\S*)? within 1s",
          ),
        );
        expect(res.stderr)
          .to.include("--request-timeout")
          .and.not.match(/\n\s+at /);
      } finally {
        await silent.close();
      }
    });
  }

  it("fails an unreachable host at once, without retries", async () => {
    const port = await freePort();
    const res = await runVc(["list", "--kubeconfig", kubeconfigFor(dir, `http://127.0.0.1:${port}`)]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.match(/cannot reach the API server http:\/\/127\.0\.0\.1:\d+: connection refused/);
  });

  it("refuses a value it cannot read, with the syntax it wants", async () => {
    const res = await runVc(["--request-timeout", "soon", "status"]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.equal(
      'error: invalid --request-timeout "soon": use seconds (30), a duration (30s, 2m) or 0 for no limit\n',
    );
  });
});
