// Hostile input in bulk: generated signed webhook bodies against the running server, and generated YAML as values
// and mesh files through vc validate. The figures in docs/security.md come from here: every input gets an answer
// (no crash, no exit 2), and no planted secret is echoed.
import { expect } from "chai";
import fc from "fast-check";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMetrics } from "../../src/reconciler/metrics.js";
import { startServer, WEBHOOK_PATH, type RunningServer } from "../../src/reconciler/server.js";
import { sign } from "../../src/reconciler/webhook.js";
import { silentLogger } from "../../src/model/log.js";
import { runVc } from "../support/vc.js";

const WEBHOOK_INPUTS = 300;
const YAML_INPUTS = 150;

describe("security: hostile input in bulk", function () {
  this.timeout(120_000);

  it(
    `${WEBHOOK_INPUTS} generated signed bodies: every one answered with 2xx or 4xx, the server ` + `alive after`,
    async () => {
      const srv: RunningServer = await startServer("127.0.0.1:0", {
        registry: createMetrics({ defaults: false }).registry,
        ready: () => true,
        healthy: () => true,
        webhookSecret: "s3cret",
        ref: "main",
        onPush: () => {},
        logger: silentLogger,
      });
      try {
        const bodies = fc.sample(
          fc.oneof(
            fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v) ?? "null"),
            fc.string({ maxLength: 200 }),
          ),
          { numRuns: WEBHOOK_INPUTS, seed: 20261124 },
        );
        const statuses = new Map<number, number>();
        for (const body of bodies) {
          const res = await fetch(`${srv.url}${WEBHOOK_PATH}`, {
            method: "POST",
            body,
            headers: { "X-GitHub-Event": "push", "X-Hub-Signature-256": sign("s3cret", body) },
          });
          await res.text();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
        expect(
          [...statuses.keys()].every((s) => s === 200 || s === 202 || s === 400),
          JSON.stringify([...statuses]),
        ).to.equal(true);
        expect((await fetch(`${srv.url}/healthz`)).status).to.equal(200);
      } finally {
        await srv.close();
      }
    },
  );

  it(
    `${YAML_INPUTS} generated YAML files as values and mesh manifests: vc validate answers each with exit 0 or 1, ` +
      `never a crash`,
    async () => {
      const tmp = mkdtempSync(join(tmpdir(), "vc-attack-yaml-"));
      try {
        const secret = "planted-Secret-9x9x";
        const yamlish = fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v) ?? ""),
          fc.constantFrom(
            "a: &x\n  b: *x\n",
            "__proto__: {polluted: true}\n",
            "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n",
            "- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - " +
              "- - - - - - - - - - - - - - - - - x\n",
            `controlPlane: {backingStore: {database: {external: {enabled: true, endpoint: ` +
              `"postgres://u:${secret}@db/x"}}}}\n`,
          ),
        );
        const inputs = fc.sample(fc.tuple(yamlish, yamlish), { numRuns: YAML_INPUTS, seed: 20261124 });
        for (let i = 0; i < inputs.length; i += 25) {
          const repo = join(tmp, `repo-${i}`);
          for (const [j, [values, mesh]] of inputs.slice(i, i + 25).entries()) {
            const dir = join(repo, "clusters", `c${j}`);
            mkdirSync(join(dir, "mesh"), { recursive: true });
            writeFileSync(join(dir, "values.yaml"), values);
            writeFileSync(join(dir, "mesh", "m.yaml"), mesh);
          }
          const res = await runVc(["validate", repo]);
          expect(res.code, res.stderr).to.be.oneOf([0, 1]);
          expect(res.stdout + res.stderr).to.not.include(secret);
          expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
        }
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },
  );
});
