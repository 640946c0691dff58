// The validation cache trusts only what it wrote: entries are authenticated, folders others may write are refused,
// pruning removes only vc's own files.
import { expect } from "chai";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { CACHE_MAX_AGE_MS, DirCache, pruneCache } from "../../src/validate/cache.js";
import { CACHE_KEY_FILE, defaultCacheRoot } from "../../src/validate/cache-dir.js";
import { loadAndValidate } from "../../src/validate/index.js";
import type { ClusterResult } from "../../src/validate/result.js";
import { TestRepo } from "../support/git-server.js";
import { runVc } from "../support/vc.js";

const entries = (dir: string): string[] => readdirSync(dir).filter((n) => n.endsWith(".vcv"));

/**
 * An entry's result turned to host namespace kube-system: its bytes after the 32-byte MAC, deserialised and written
 * back in the same layout.
 */
function forgeKubeSystem(body: Buffer): Buffer {
  const size = body.readUInt32BE(0);
  const summary = deserialize(body.subarray(4, 4 + size)) as ClusterResult;
  const full = deserialize(body.subarray(4 + size)) as Pick<ClusterResult, "spec" | "values">;
  summary.settings!.namespace = "kube-system";
  full.spec!.settings.namespace = "kube-system";
  const head = serialize(summary);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(head.length);
  return Buffer.concat([len, head, serialize(full)]);
}

describe("validate: cache trust", function () {
  this.timeout(60_000);
  const tmp: string[] = [];
  const tempDir = (): string => {
    const d = mkdtempSync(join(tmpdir(), "vc-cache-trust-"));
    tmp.push(d);
    return d;
  };
  after(() => tmp.forEach((d) => rmSync(d, { recursive: true, force: true })));
  /**
   * A repository of one cluster, `a`, validated once with a cache folder of its own (beside it): its one entry written.
   */
  const validatedOnce = async (): Promise<{ root: string; cacheDir: string }> => {
    const root = tempDir();
    mkdirSync(join(root, "clusters", "a"), { recursive: true });
    writeFileSync(join(root, "clusters", "a", "values.yaml"), "{}\n");
    const cacheDir = join(root, "..", `${root.split("/").pop()}-cache`);
    tmp.push(cacheDir);
    await loadAndValidate(root, { cacheDir });
    return { root, cacheDir };
  };

  it("a rewritten entry is ignored: vc validate --cache-dir never reports kube-system from it", async () => {
    const repo = new TestRepo();
    try {
      mkdirSync(join(repo.work, "clusters", "team"), { recursive: true });
      writeFileSync(join(repo.work, "clusters", "team", "values.yaml"), "{}\n");
      repo.commit("one cluster");
      const cache = join(tempDir(), "cache");
      const first = await runVc(["validate", "-o", "json", "--cache-dir", cache], { cwd: repo.work });
      expect(first.code, first.stderr).to.equal(0);
      const [entry] = entries(cache);
      const path = join(cache, entry!);
      const data = readFileSync(path);
      const forged = forgeKubeSystem(data.subarray(32));
      for (const planted of [
        Buffer.concat([data.subarray(0, 32), forged]), // the entry's own MAC over other content
        Buffer.concat([Buffer.alloc(32), forged]), // a MAC of zeros
        forged, // the previous format: no MAC at all
      ]) {
        writeFileSync(path, planted);
        const run = await runVc(["validate", "-o", "json", "--cache-dir", cache], { cwd: repo.work });
        expect(run.code, run.stderr).to.equal(0);
        expect(run.stdout).to.not.contain("kube-system");
      }
    } finally {
      repo.dispose();
    }
  });

  it("counts a forged entry and validates the folder anew", async () => {
    const { root, cacheDir } = await validatedOnce();
    const [entry] = entries(cacheDir);
    const data = readFileSync(join(cacheDir, entry!));
    writeFileSync(join(cacheDir, entry!), Buffer.concat([data.subarray(0, 32), forgeKubeSystem(data.subarray(32))]));
    const opened = DirCache.open(cacheDir);
    expect("cache" in opened).to.equal(true);
    const cache = (opened as { cache: DirCache }).cache;
    expect(cache.get(entry!.slice(0, -4), "full")).to.equal(undefined);
    expect(cache.forged).to.equal(1);
    const again = await loadAndValidate(root, { cacheDir });
    expect(again.clusters[0]!.spec!.settings.namespace).to.equal("vc-a");
  });

  it(
    "writes an entry whole under its own name (no temporary file); one cut short is removed when read and " +
      "written anew",
    async () => {
      const { root, cacheDir } = await validatedOnce();
      expect(readdirSync(cacheDir).sort()).to.deep.equal([...entries(cacheDir), CACHE_KEY_FILE].sort());
      const [entry] = entries(cacheDir);
      const path = join(cacheDir, entry!);
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      const whole = readFileSync(path);
      // A write cut by a crash leaves a prefix: never trusted, and out of the way of the next write.
      writeFileSync(path, whole.subarray(0, whole.length - 7));
      const cache = (DirCache.open(cacheDir) as { cache: DirCache }).cache;
      expect(cache.get(entry!.slice(0, -4), "full")).to.equal(undefined);
      expect(entries(cacheDir)).to.deep.equal([]);
      const again = await loadAndValidate(root, { cacheDir });
      expect(again.clusters[0]!.spec!.settings.namespace).to.equal("vc-a");
      expect(readFileSync(path).equals(whole)).to.equal(true);
    },
  );

  it("never writes an entry through a symlink at its name, and keeps an entry another run wrote", async () => {
    const { cacheDir } = await validatedOnce();
    const [entry] = entries(cacheDir);
    const path = join(cacheDir, entry!);
    const cache = (DirCache.open(cacheDir) as { cache: DirCache }).cache;
    const result = cache.get(entry!.slice(0, -4), "full")!;
    // Another run's entry under the name: left as it is.
    writeFileSync(path, "another run's entry");
    cache.set(entry!.slice(0, -4), result);
    expect(readFileSync(path, "utf8")).to.equal("another run's entry");
    // A symlink at the name: not followed, its target untouched.
    rmSync(path);
    const elsewhere = join(tempDir(), "victim");
    writeFileSync(elsewhere, "untouched");
    symlinkSync(elsewhere, path);
    cache.set(entry!.slice(0, -4), result);
    expect(readFileSync(elsewhere, "utf8")).to.equal("untouched");
    rmSync(path);
    cache.set(entry!.slice(0, -4), result);
    expect(cache.get(entry!.slice(0, -4), "full")).to.deep.equal(result);
  });

  it("creates its key 0600 and its folder 0700, and refuses a key file git could have checked out (0644)", async () => {
    const root = tempDir();
    mkdirSync(join(root, "clusters", "a"), { recursive: true });
    writeFileSync(join(root, "clusters", "a", "values.yaml"), "{}\n");
    const cacheDir = join(root, "deep", "cache");
    await loadAndValidate(root, { cacheDir });
    expect(statSync(cacheDir).mode & 0o777).to.equal(0o700);
    expect(statSync(join(cacheDir, CACHE_KEY_FILE)).mode & 0o777).to.equal(0o600);
    chmodSync(join(cacheDir, CACHE_KEY_FILE), 0o644);
    const r = await loadAndValidate(root, { cacheDir });
    const w = r.diagnostics.find((d) => d.code === "cache-refused")!;
    expect(w.severity).to.equal("warning");
    expect(w.message).to.contain("mode 644");
    expect(r.clusters[0]!.valid).to.equal(true);
  });

  it(
    "`--cache-dir .` removes no file of the repository (.gitignore, .npmrc, dotfiles of any age), only " + "vc's own",
    async () => {
      const root = tempDir();
      mkdirSync(join(root, "clusters", "a"), { recursive: true });
      writeFileSync(join(root, "clusters", "a", "values.yaml"), "{}\n");
      const own = [".gitignore", ".npmrc", ".env", ".abc.123.x", "notes.vcv", `.${"0".repeat(63)}.1.x`];
      for (const f of own) writeFileSync(join(root, f), "keep\n");
      const old = new Date(Date.now() - 3 * 24 * 3600_000);
      for (const f of own) utimesSync(join(root, f), old, old);
      const run = await runVc(["validate", "--cache-dir", "."], { cwd: root });
      expect(run.code, run.stderr + run.stdout).to.equal(0);
      const [entry] = entries(root).filter((n) => n !== "notes.vcv");
      const stale = `.${"a".repeat(64)}.42.tmp1`;
      writeFileSync(join(root, stale), "x");
      for (const f of [entry!, stale]) utimesSync(join(root, f), old, old);
      expect(pruneCache(root, CACHE_MAX_AGE_MS, Date.now() + 2 * 3600_000)).to.equal(1);
      for (const f of own) expect(readFileSync(join(root, f), "utf8"), f).to.equal("keep\n");
      expect(readdirSync(root)).to.not.include.members([entry!, stale]);
    },
  );

  it(
    "refuses a symlinked or group/world-writable cache folder with a clear message; the run goes on without a " +
      "cache and prunes nothing there",
    async () => {
      const root = tempDir();
      mkdirSync(join(root, "clusters", "a"), { recursive: true });
      writeFileSync(join(root, "clusters", "a", "values.yaml"), "{}\n");
      const target = join(tempDir(), "real");
      mkdirSync(target);
      writeFileSync(join(target, `${"b".repeat(64)}.vcv`), "x");
      utimesSync(join(target, `${"b".repeat(64)}.vcv`), new Date(0), new Date(0));
      const link = join(tempDir(), "link");
      symlinkSync(target, link);
      const open = join(tempDir(), "open");
      mkdirSync(open);
      chmodSync(open, 0o777);
      for (const [dir, why] of [
        [link, "symlink"],
        [open, "writable by its group and others"],
      ] as const) {
        const r = await runVc(["validate", "--cache-dir", dir], { cwd: root });
        expect(r.code, r.stdout + r.stderr).to.equal(0);
        expect(r.stdout + r.stderr)
          .to.contain(`validation cache ${dir} not used`)
          .and.to.contain(why);
        expect(pruneCache(dir, CACHE_MAX_AGE_MS, Date.now() + 2 * 3600_000)).to.equal(0);
      }
      expect(readdirSync(target)).to.deep.equal([`${"b".repeat(64)}.vcv`]);
      expect(readdirSync(open)).to.deep.equal([]);
    },
  );

  it("keeps its default outside the checkout: $XDG_CACHE_HOME/vc, else ~/.cache/vc", () => {
    expect(defaultCacheRoot({ XDG_CACHE_HOME: "/x/cache" })).to.equal("/x/cache/vc");
    expect(defaultCacheRoot({ XDG_CACHE_HOME: "relative" })).to.match(/\/\.cache\/vc$/);
    expect(defaultCacheRoot({})).to.match(/\/\.cache\/vc$/);
  });
});
