// The webhook front door under hostile senders (issue: one stranger's request could stop the fleet): every signed
// body gets an answer, unsigned bodies are refused before they are read, in-flight reads are capped, memory is
// bounded, and a blank secret is a start-up error.
import { expect } from "chai";
import { request } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMetrics } from "../../src/reconciler/metrics.js";
import {
  startServer,
  WEBHOOK_KEEP_BYTES,
  WEBHOOK_MAX_PENDING,
  WEBHOOK_PATH,
  type RunningServer,
} from "../../src/reconciler/server.js";
import { webhookSecret } from "../../src/reconciler/service.js";
import { sign } from "../../src/reconciler/webhook.js";
import { UserError } from "../../src/model/errors.js";
import { silentLogger } from "../../src/model/log.js";

const SECRET = "s3cret";

describe("reconciler: the webhook front door", () => {
  let srv: RunningServer;
  const pushes: Array<string | undefined> = [];
  before(async () => {
    srv = await startServer("127.0.0.1:0", {
      registry: createMetrics({ defaults: false }).registry,
      ready: () => true,
      healthy: () => true,
      webhookSecret: SECRET,
      ref: "main",
      onPush: (c) => pushes.push(c),
      logger: silentLogger,
    });
  });
  after(() => srv.close());

  const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${srv.url}${WEBHOOK_PATH}`, { method: "POST", body, headers: { "X-GitHub-Event": "push", ...headers } });
  const signed = (body: string | Buffer) => post(body, { "X-Hub-Signature-256": sign(SECRET, body) });

  it(
    "answers 400 to signed bodies that are not push payloads (null, a list, a string, deep JSON), and keeps " +
      "serving",
    async () => {
      const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
      for (const body of ["null", "[1,2]", '"refs/heads/main"', "42", deep, "{not json"]) {
        const res = await signed(body);
        expect(res.status, body.slice(0, 20)).to.equal(400);
      }
      const ok = await signed(JSON.stringify({ ref: "refs/heads/main", after: "abc123" }));
      expect(ok.status).to.equal(202);
      expect(pushes.at(-1)).to.equal("abc123");
    },
  );

  it("refuses a request without a well-formed signature before reading its body", async () => {
    for (const headers of [{}, { "X-Hub-Signature-256": "sha256=zz" }, { "X-Hub-Signature-256": "sha1=abc" }] as Array<
      Record<string, string>
    >) {
      const res = await post("x".repeat(1024), headers);
      expect(res.status).to.equal(401);
    }
    expect((await fetch(`${srv.url}${WEBHOOK_PATH}`)).status).to.equal(405);
  });

  it(
    "a signed body longer than what is kept still triggers a pass (without a commit), holding only the " + "kept bytes",
    async () => {
      const body = JSON.stringify({
        ref: "refs/heads/main",
        after: "bigpush",
        pad: "x".repeat(WEBHOOK_KEEP_BYTES * 2),
      });
      const before = pushes.length;
      const res = await signed(body);
      expect(res.status).to.equal(202);
      expect(pushes.length).to.equal(before + 1);
      expect(pushes.at(-1)).to.equal(undefined);
      const forged = await post(body, { "X-Hub-Signature-256": sign("wrong", body) });
      expect(forged.status).to.equal(401);
    },
  );

  it(
    `caps requests being read at ${WEBHOOK_MAX_PENDING}: one more takes the slot of the slowest, which gets 503 ` +
      `with Retry-After`,
    async () => {
      // One sender per address: nobody holds more than its share, so the newcomer takes the oldest (or slowest) slot.
      const statuses: number[] = [];
      let evicted!: () => void;
      const someEvicted = new Promise<void>((resolve) => (evicted = resolve));
      const held = Array.from({ length: WEBHOOK_MAX_PENDING }, (_, i) => {
        const req = request(`${srv.url}${WEBHOOK_PATH}`, {
          method: "POST",
          localAddress: `127.0.3.${i + 1}`,
          agent: false,
          headers: { "X-Hub-Signature-256": `sha256=${"0".repeat(64)}`, "Content-Length": "1000000" },
        });
        req.on("error", () => {});
        req.on("response", (res) => {
          statuses.push(res.statusCode ?? 0, Number(res.headers["retry-after"]));
          res.resume();
          evicted();
        });
        req.write("x".repeat(1000));
        return req;
      });
      await new Promise((r) => setTimeout(r, 200));
      const extra = await signed(JSON.stringify({ ref: "refs/heads/main", after: "while-full" }));
      expect(extra.status).to.equal(202);
      await someEvicted;
      expect(statuses).to.deep.equal([503, 1]);
      for (const req of held) req.destroy();
    },
  );

  it('a blank or whitespace-only secret (file or environment) is a start-up error, never the key ""', () => {
    const dir = mkdtempSync(join(tmpdir(), "vc-secret-"));
    try {
      for (const content of ["", "  \n\t\n"]) {
        writeFileSync(join(dir, "secret"), content);
        expect(() => webhookSecret(join(dir, "secret"))).to.throw(UserError, /is empty/);
      }
      writeFileSync(join(dir, "secret"), " s3cret\n");
      expect(webhookSecret(join(dir, "secret"))).to.equal("s3cret");
      const saved = process.env.VC_WEBHOOK_SECRET;
      process.env.VC_WEBHOOK_SECRET = "   ";
      try {
        expect(() => webhookSecret(undefined)).to.throw(UserError, /blank/);
      } finally {
        if (saved === undefined) delete process.env.VC_WEBHOOK_SECRET;
        else process.env.VC_WEBHOOK_SECRET = saved;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
