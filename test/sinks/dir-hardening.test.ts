// The dir: target reads back what it wrote as carefully as the repository: loader limits, no symlinks followed,
// temporary files of a crashed run removed, Secret manifests readable by their owner only.
import { expect } from "chai";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "clusters");

describe("sinks/dir: hardened reads and writes", function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  let out: string;
  const apply = () => runVc(["apply", repo, "--target", `dir:${out}`, "--prune"]);

  beforeEach(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-dir-hard-"));
    repo = join(tmp, "repo");
    out = join(tmp, "out");
    cpSync(EXAMPLE, join(repo, "clusters"), { recursive: true });
    const first = await apply();
    expect(first.code, first.stdout + first.stderr).to.equal(0);
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
    );

  it("writes Secret manifests 0600 and others 0644", () => {
    const secrets = files(out).filter((f) => /\/secret_[^/]+\.yaml$/.test(f));
    expect(secrets.length).to.be.greaterThan(0);
    for (const f of secrets) expect(statSync(f).mode & 0o777, f).to.equal(0o600);
    const other = files(out).find((f) => /\/service_[^/]+\.yaml$/.test(f))!;
    expect(statSync(other).mode & 0o777).to.equal(0o644);
  });

  it("removes the temporary file a crashed run left behind", async () => {
    const dir = join(out, "minimal", "vc-minimal");
    const stale = join(dir, "configmap_leftover.yaml.tmp-99999999");
    writeFileSync(stale, "kind: ConfigMap\n");
    const res = await apply();
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(existsSync(stale)).to.equal(false);
  });

  it(
    "refuses a symlink planted in the target folder instead of following it, and leaves its " + "target alone",
    async () => {
      const outside = join(tmp, "outside.yaml");
      writeFileSync(outside, "precious: true\n");
      const victim = files(join(out, "minimal")).find((f) => /\/service_[^/]+\.yaml$/.test(f))!;
      rmSync(victim);
      symlinkSync(outside, victim);
      const res = await runVc(["diff", repo, "--target", `dir:${out}`]);
      expect(res.code).to.equal(2);
      expect(res.stdout + res.stderr).to.match(/a symlink in the target folder: refused, not followed/);
      expect(readFileSync(outside, "utf8")).to.equal("precious: true\n");
    },
  );

  it("reads manifests with the loader's limits: an alias bomb is a located error, not an out-of-memory", async () => {
    const target = files(join(out, "minimal")).find((f) => /\/service_[^/]+\.yaml$/.test(f))!;
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x]",
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, ` +
          `*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, ` +
          `*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, ` +
          `*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
      ),
    ].join("\n");
    writeFileSync(target, `${bomb}\n`);
    const res = await runVc(["diff", repo, "--target", `dir:${out}`]);
    expect(res.code).to.equal(2);
    expect(res.stdout + res.stderr).to.match(/service_[^:]+\.yaml:\d+:\d+:/);
  });
});
