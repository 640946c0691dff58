// The global --records-namespace: every command that reads vc's records reads them there, before $VC_RECORDS_NAMESPACE.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";
import { kubeconfigFor, silentServer } from "../support/silent-server.js";

describe("vc --records-namespace", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "vc-records-ns-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // The server never answers: the request vc gave up on (the records namespace's own GET, its platform mark verified
  // before any record is read) names the namespace it read the records from.
  const recordsRead = async (args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> => {
    const silent = await silentServer();
    try {
      const res = await runVc([...args, "--request-timeout", "1s", "--kubeconfig", kubeconfigFor(dir, silent.url)], {
        env,
      });
      expect(res.code, res.stderr).to.equal(2);
      return /GET \/api\/v1\/namespaces\/([^/\s]+)(?:\/configmaps|\s)/.exec(res.stderr)?.[1] ?? res.stderr;
    } finally {
      await silent.close();
    }
  };

  it("is read before and after the command, and wins over $VC_RECORDS_NAMESPACE", async () => {
    expect(await recordsRead(["--records-namespace", "platform-records", "status", "--target", "kube"])).to.equal(
      "platform-records",
    );
    expect(
      await recordsRead(["status", "--target", "kube", "--records-namespace", "platform-records"], {
        VC_RECORDS_NAMESPACE: "from-env",
      }),
    ).to.equal("platform-records");
    expect(await recordsRead(["status", "--target", "kube"], { VC_RECORDS_NAMESPACE: "from-env" })).to.equal(
      "from-env",
    );
  });

  it("refuses a name that is not a namespace name, before reading anything", async () => {
    const res = await runVc(["--records-namespace", "Team_Records", "status", "--target", "kube"]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.match(/^error: invalid --records-namespace "Team_Records": /);
    expect(res.stderr).to.not.match(/\n\s+at /);
  });
});
