// GitMirror against a real `git http-backend`: clone, fetch, force-push, tags, auth header, unreachable remote.
import { expect } from "chai";
import { mkdtempSync, readFileSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GitMirror, GitRemoteError } from "../../src/git/mirror.js";
import { GitCredential, loadGitCredential } from "../../src/git/auth.js";
import { startGitServer, TestRepo, type GitServer } from "../support/git-server.js";

describe("git mirror", () => {
  let repo: TestRepo;
  let server: GitServer;
  let local: string;

  beforeEach(async () => {
    repo = new TestRepo();
    repo.write({ "clusters/a/values.yaml": "a: 1\n", "clusters/b/values.yaml": "b: 1\n" });
    repo.commit("first");
    server = await startGitServer(repo.root);
    local = mkdtempSync(join(tmpdir(), "vc-mirror-"));
  });
  afterEach(async () => {
    await server.close();
    repo.dispose();
    rmSync(local, { recursive: true, force: true });
  });

  it("clones once, then fetches and checks out new commits", async () => {
    const m = new GitMirror({ url: `${server.url}/${repo.path}`, dir: join(local, "m") });
    const first = await m.sync();
    expect(first.cloned).to.equal(true);
    expect(first.commit).to.equal(repo.head());
    expect(readFileSync(join(local, "m/clusters/a/values.yaml"), "utf8")).to.equal("a: 1\n");

    const again = await m.sync();
    expect(again).to.include({ changed: false, cloned: false, commit: first.commit });

    repo.write({ "clusters/a/values.yaml": "a: 2\n", "clusters/b": null });
    const second = repo.commit("second");
    const res = await m.sync();
    expect(res).to.include({ changed: true, cloned: false, commit: second, previous: first.commit });
    expect(readFileSync(join(local, "m/clusters/a/values.yaml"), "utf8")).to.equal("a: 2\n");
    expect(existsSync(join(local, "m/clusters/b/values.yaml"))).to.equal(false);
  });

  it("resumes from an existing local copy without cloning again", async () => {
    const dir = join(local, "m");
    await new GitMirror({ url: `${server.url}/${repo.path}`, dir }).sync();
    const res = await new GitMirror({ url: `${server.url}/${repo.path}`, dir }).sync();
    expect(res.cloned).to.equal(false);
    expect(res.changed).to.equal(false);
  });

  it("follows a force-push that rewrites history", async () => {
    const m = new GitMirror({ url: `${server.url}/${repo.path}`, dir: join(local, "m") });
    const first = repo.head();
    repo.write({ "clusters/a/values.yaml": "a: bad\n" });
    const bad = repo.commit("bad");
    expect((await m.sync()).commit).to.equal(bad);
    repo.run("reset", "-q", "--hard", first);
    repo.write({ "clusters/a/values.yaml": "a: fixed\n" });
    const rewritten = repo.commit("rewritten", { force: true });
    const res = await m.sync();
    expect(res).to.include({ changed: true, commit: rewritten, previous: bad });
    expect(readFileSync(join(local, "m/clusters/a/values.yaml"), "utf8")).to.equal("a: fixed\n");
  });

  it("follows an annotated tag", async () => {
    const tagged = repo.head();
    repo.run("tag", "-a", "v1", "-m", "release 1");
    repo.run("push", "-q", "origin", "v1");
    repo.write({ "clusters/a/values.yaml": "a: later\n" });
    repo.commit("after the tag");
    const m = new GitMirror({ url: `${server.url}/${repo.path}`, dir: join(local, "m"), ref: "v1" });
    const res = await m.sync();
    expect(res.commit).to.equal(tagged);
    expect(readFileSync(join(local, "m/clusters/a/values.yaml"), "utf8")).to.equal("a: 1\n");
  });

  it("sends credentials as an Authorization header and never shows them", async () => {
    await server.close();
    const cred = new GitCredential("bot", "s3cret-token");
    server = await startGitServer(repo.root, { authorization: cred.headers().Authorization });
    const url = `${server.url}/${repo.path}`;
    const refused = new GitMirror({ url, dir: join(local, "no") });
    const err = await refused.sync().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(GitRemoteError);
    expect((err as Error).message).to.match(/HTTP 401/);

    const m = new GitMirror({ url, dir: join(local, "yes"), credential: cred });
    expect((await m.sync()).commit).to.equal(repo.head());
    expect(server.authHeaders).to.include(cred.headers().Authorization);
    expect(String(cred)).to.not.include("s3cret");
    expect(JSON.stringify({ cred })).to.not.include("s3cret");
  });

  it("reports an unreachable remote as a GitRemoteError and keeps the checked-out commit", async () => {
    const m = new GitMirror({ url: `${server.url}/${repo.path}`, dir: join(local, "m") });
    const first = await m.sync();
    await server.stop();
    const err = await m.sync().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(GitRemoteError);
    expect((err as Error).message).to.match(/ECONNREFUSED/);
    expect(m.commit).to.equal(first.commit);
    await server.start();
    repo.write({ "clusters/a/values.yaml": "a: back\n" });
    const next = repo.commit("back");
    expect((await m.sync()).commit).to.equal(next);
  });

  it("refuses a branch that does not exist", async () => {
    const m = new GitMirror({ url: `${server.url}/${repo.path}`, dir: join(local, "m"), ref: "nope" });
    const err = await m.sync().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(GitRemoteError);
  });
});

describe("git mirror over a slow link", () => {
  let repo: TestRepo;
  let local: string;
  const servers: GitServer[] = [];

  beforeEach(() => {
    repo = new TestRepo();
    // Incompressible content, so that the pack takes many pieces of the slow link.
    repo.write({ "clusters/a/values.yaml": `a: ${randomBytes(6144).toString("base64")}\n` });
    repo.commit("first");
    local = mkdtempSync(join(tmpdir(), "vc-mirror-slow-"));
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    repo.dispose();
    rmSync(local, { recursive: true, force: true });
  });

  it("fetches over a link slower than the idle timeout in total, that never goes silent that long", async () => {
    const server = await startGitServer(repo.root, { link: { bytes: 512, everyMs: 100 } });
    servers.push(server);
    const m = new GitMirror({ url: `${server.url}/${repo.path}`, dir: join(local, "m"), idleTimeoutMs: 1000 });
    const started = Date.now();
    const res = await m.sync();
    expect(res.commit).to.equal(repo.head());
    expect(readFileSync(join(local, "m/clusters/a/values.yaml"), "utf8")).to.match(/^a: /);
    // The link's own delay (the pack alone is over 8 KiB, 512 bytes a tenth of a second): longer than the idle
    // timeout, so a limit on each request's total time would have failed this fetch.
    expect(Date.now() - started).to.be.at.least(1000);
  });

  it("waits out a link silent longer than Node's global agent's 5 s socket timeout", async () => {
    // Every response pauses 6 s after its first 1,000 bytes (the pack, in the middle), then goes on.
    const server = await startGitServer(repo.root, {
      link: { bytes: 1024, everyMs: 20, stallAfter: 1000, resumeAfterMs: 6000 },
    });
    servers.push(server);
    const m = new GitMirror({ url: `${server.url}/${repo.path}`, dir: join(local, "m"), idleTimeoutMs: 20_000 });
    const res = await m.sync();
    expect(res.commit).to.equal(repo.head());
  });

  // A stall in the ref advertisement (its first 100 bytes) and in the pack (the advertisement is shorter than 1,000).
  for (const stallAfter of [100, 1000])
    it(`gives up when the server stops sending after ${stallAfter} bytes, says it stalled`, async () => {
      const good = await startGitServer(repo.root);
      servers.push(good);
      const dir = join(local, "m");
      const first = await new GitMirror({ url: `${good.url}/${repo.path}`, dir }).sync();
      repo.write({ "clusters/a/values.yaml": `a: ${randomBytes(6144).toString("base64")}\n` });
      repo.commit("next");
      const stalled = await startGitServer(repo.root, { link: { bytes: 64, everyMs: 20, stallAfter } });
      servers.push(stalled);
      const m = new GitMirror({ url: `${stalled.url}/${repo.path}`, dir, idleTimeoutMs: 500 });
      const err = await m.sync().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(GitRemoteError);
      expect((err as Error).message).to.equal(
        `cannot fetch main from ${stalled.url}/${repo.path}: the server sent nothing for 500 ms (the link stalled; ` +
          "a slow link that still sends is waited for); the request was given up",
      );
      expect(readFileSync(join(dir, ".git/vc-checkout"), "utf8").trim()).to.equal(first.commit);
      // The link back: the next sync fetches the new commit.
      const back = await new GitMirror({ url: `${good.url}/${repo.path}`, dir }).sync();
      expect(back.commit).to.equal(repo.head());
    });
});

describe("git credentials", () => {
  it("reads a token or user:password from a file, or the environment", () => {
    const dir = mkdtempSync(join(tmpdir(), "vc-cred-"));
    writeFileSync(join(dir, "token"), "tok123\n");
    writeFileSync(join(dir, "basic"), "alice:pw\n");
    const b64 = (s: string) => `Basic ${Buffer.from(s).toString("base64")}`;
    expect(loadGitCredential({ file: join(dir, "token"), env: {} })!.headers().Authorization).to.equal(
      b64("x-access-token:tok123"),
    );
    expect(loadGitCredential({ file: join(dir, "basic"), env: {} })!.headers().Authorization).to.equal(b64("alice:pw"));
    expect(loadGitCredential({ env: { VC_GIT_TOKEN: "t" } })!.headers().Authorization).to.equal(
      b64("x-access-token:t"),
    );
    expect(
      loadGitCredential({ env: { VC_GIT_USERNAME: "u", VC_GIT_PASSWORD: "p" } })!.headers().Authorization,
    ).to.equal(b64("u:p"));
    expect(loadGitCredential({ env: {} })).to.equal(undefined);
    expect(() => loadGitCredential({ file: join(dir, "missing"), env: {} })).to.throw(
      /cannot read git credentials file/,
    );
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("git mirror: credentials in the repository URL", function () {
  this.timeout(30_000);
  it(
    "sends them in a header and writes them nowhere on disk (not in .git/config, not in the " + "folder name)",
    async () => {
      const { readdirSync, statSync } = await import("node:fs");
      const repo = new TestRepo();
      writeFileSync(join(repo.work, "README.md"), "hello\n");
      repo.commit("first");
      const password = "pw-Zx81-never-on-disk";
      const server = await startGitServer(repo.root, {
        authorization: `Basic ${Buffer.from(`deploy:${password}`).toString("base64")}`,
      });
      const local = mkdtempSync(join(tmpdir(), "vc-mirror-cred-"));
      try {
        const withCreds = server.url.replace("://", `://deploy:${password}@`);
        const m = new GitMirror({ url: `${withCreds}/${repo.path}`, dir: join(local, "m") });
        expect(String(m.url)).to.not.include(password);
        const res = await m.sync();
        expect(res.commit).to.match(/^[0-9a-f]{40}$/);
        const files = (dir: string): string[] =>
          readdirSync(dir).flatMap((f) =>
            statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)],
          );
        const leaking = files(local).filter((f) => readFileSync(f).includes(password) || f.includes(password));
        expect(leaking).to.deep.equal([]);
        expect(readFileSync(join(local, "m", ".git", "config"), "utf8")).to.include(`${server.url}/${repo.path}`);
      } finally {
        await server.close();
        repo.dispose();
        rmSync(local, { recursive: true, force: true });
      }
    },
  );
});
