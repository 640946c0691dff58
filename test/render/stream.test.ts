// `vc render` prints a fleet chunk by chunk (RENDER_CHUNK clusters at a time) with the bytes of printing it whole,
// the namespace rule still holding across chunks.
import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { RENDER_CHUNK } from "../../src/cli/render.js";
import { main } from "../../src/cli/main.js";
import { renderSpecs } from "../../src/render/fleet.js";
import { JsonListWriter, toJsonList, toYamlStream } from "../../src/render/output.js";
import { withholdCredentials } from "../../src/render/secrets.js";
import { loadAndValidate, validSpecs } from "../../src/validate/index.js";
import type { KubeObject } from "../../src/kube/object.js";

/** `vc ARGS` with every stdout write kept apart. */
async function writes(args: string[]): Promise<{ code: number; pieces: string[]; stderr: string }> {
  const pieces: string[] = [];
  let stderr = "";
  const [out, err] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((c: string | Uint8Array) => (pieces.push(String(c)), true)) as typeof process.stdout.write;
  process.stderr.write = ((c: string | Uint8Array) => ((stderr += String(c)), true)) as typeof process.stderr.write;
  try {
    return { code: await main(args), pieces, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

describe("render: streamed output", function () {
  this.timeout(120_000);
  let repo: string;
  const n = RENDER_CHUNK + 20;
  before(async () => {
    repo = mkdtempSync(join(tmpdir(), "vc-render-stream-"));
    await generateFleet(repo, { clusters: n, meshPerCluster: 0 });
    // The first and the last cluster in name order (different chunks) claim one host namespace.
    const sorted = Array.from({ length: n }, (_, i) => fleetClusterName(i)).sort();
    writeFileSync(join(repo, "clusters", sorted[n - 1]!, "cluster.yaml"), `namespace: vc-${sorted[0]}\n`);
  });
  after(() => rmSync(repo, { recursive: true, force: true }));

  it("JsonListWriter writes toJsonList's bytes, for none, one and many objects", () => {
    const objs: KubeObject[] = [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "a", labels: { x: "1" } },
        data: { "k.yaml": "line one\nline two\n" },
      },
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "b" } },
    ];
    for (const set of [[], objs.slice(0, 1), objs]) {
      let text = "";
      const w = new JsonListWriter((t) => (text += t));
      w.add(set.slice(0, 1));
      w.add(set.slice(1));
      w.end();
      expect(text).to.equal(toJsonList(set));
    }
  });

  for (const format of ["json", "yaml"] as const) {
    it(
      `-o ${format}: printed a chunk at a time, the same bytes as the whole fleet at once, the namespace rule ` +
        `across chunks`,
      async () => {
        const res = await writes(["render", repo, "-o", format, "--revision", "abc"]);
        expect(res.code).to.equal(1);
        expect(res.pieces.length, "one piece per chunk at least").to.be.at.least(2);
        const whole = await loadAndValidate(repo);
        const objects = renderSpecs(validSpecs(whole), "abc")
          .clusters.flatMap((c) => c.objects)
          .map(withholdCredentials);
        expect(res.pieces.join("")).to.equal(format === "json" ? toJsonList(objects) : toYamlStream(objects));
        const sorted = Array.from({ length: n }, (_, i) => fleetClusterName(i)).sort();
        expect(res.stderr).to.include(`is also used by cluster ${sorted[n - 1]}`);
        expect(res.stderr).to.include(`is also used by cluster ${sorted[0]}`);
        expect(validSpecs(whole)).to.have.length(n - 2);
      },
    );
  }
});
