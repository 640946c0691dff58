// No credentials in git: an inline database endpoint with a password is a warning naming endpointSecretRef, one that
// is not a URL an error; a planted endpoint never reaches vc render's output, hydrated dir: files, any diff,
// describe or validation messages (raw or base64), and only the live host's Secret holds it.
import { expect } from "chai";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { ANNOTATIONS } from "../../src/translate/keys.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const PASSWORD = "Db-Pl4nted-9999";
const NEW_PASSWORD = "Db-N3w-Pl4nted-7777";
const endpoint = (pw: string): string => `postgres://vc:${pw}@db.platform.example.com:5432/vc?sslmode=require`;
const VALUES = (pw: string): string => `controlPlane:
  backingStore:
    kvstore:
      embedded:
        enabled: false
    database:
      external:
        enabled: true
        endpoint: "${endpoint(pw)}"
`;

/**
 * Every form a planted value could take in an output: itself, and base64 of the endpoint (at each of the three
 * alignments).
 */
function leaks(text: string, pw: string): string[] {
  const found: string[] = [];
  if (text.includes(pw)) found.push("raw");
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  for (let shift = 0; shift < 3; shift++) {
    const enc = b64("xx".slice(0, shift) + endpoint(pw))
      .slice(shift === 0 ? 0 : 4)
      .slice(0, 20);
    if (text.includes(enc)) found.push(`base64/${shift}`);
  }
  // Any base64 value in the text that decodes to something holding the password.
  for (const m of text.matchAll(/[A-Za-z0-9+/]{24,}={0,2}/g)) {
    if (Buffer.from(m[0], "base64").toString("latin1").includes(pw)) found.push("decoded");
  }
  return found;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe("security: no credentials in git or in hydrated output", function () {
  this.timeout(60_000);
  let repo: string;
  let out: string;
  let server: KubeServer;

  beforeEach(async () => {
    repo = exampleRepo(["minimal"], { "clusters/db/values.yaml": VALUES(PASSWORD) });
    out = join(repo, "..", `${repo.split("/").at(-1)}-hydrated`);
    server = await startKubeServer();
  });
  afterEach(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  it("vc validate warns, names the reference form, and quotes no password (text, json, github)", async () => {
    for (const format of ["text", "json", "github"]) {
      const res = await runVc(["validate", repo, "--format", format]);
      expect(res.code, format).to.equal(0); // a warning
      const all = res.stdout + res.stderr;
      expect(all, format).to.include("endpointSecretRef").and.include("holds a password");
      expect(leaks(all, PASSWORD), format).to.deep.equal([]);
    }
    const text = await runVc(["validate", repo]);
    expect(text.stdout + text.stderr).to.match(
      /clusters\/db\/values\.yaml:9:9: warning: the external database endpoint holds a password/,
    );
  });

  it("an endpoint that is not a URL is an error that does not quote it", async () => {
    writeFileSync(
      join(repo, "clusters/db/values.yaml"),
      VALUES(PASSWORD).replace(endpoint(PASSWORD), `vc:${PASSWORD}@db.example.com`),
    );
    const res = await runVc(["validate", repo]);
    expect(res.code).to.equal(1);
    expect(res.stdout + res.stderr).to.match(
      /clusters\/db\/values\.yaml:9:9: error: the external database endpoint is not a URL: write it as scheme:\/\/.*endpointSecretRef/,
    );
    expect(res.stdout + res.stderr).to.not.include(PASSWORD);
    for (const bad of ["db.example.com:5432", "just words", "postgres://"]) {
      writeFileSync(join(repo, "clusters/db/values.yaml"), VALUES(PASSWORD).replace(endpoint(PASSWORD), bad));
      expect((await runVc(["validate", repo])).code, bad).to.equal(1);
    }
    writeFileSync(
      join(repo, "clusters/db/values.yaml"),
      VALUES(PASSWORD).replace(endpoint(PASSWORD), "postgres://vc@db.example.com/vc"),
    );
    const clean = await runVc(["validate", repo]);
    expect(clean.code).to.equal(0);
    expect(clean.stdout + clean.stderr).to.include("0 warnings");
  });

  it("vc render (yaml, json, --out) shows the database Secret without its data, and says so", async () => {
    for (const args of [[], ["-o", "json"]]) {
      const res = await runVc(["render", repo, "--cluster", "db", ...args]);
      expect(res.code, res.stderr).to.equal(0);
      expect(leaks(res.stdout + res.stderr, PASSWORD), args.join(" ")).to.deep.equal([]);
      expect(res.stderr).to.include(
        "note: Secret vc-db/vc-database-db holds a credential written inline in the repository",
      );
    }
    const yaml = (await runVc(["render", repo, "--cluster", "db"])).stdout;
    const secret = (
      loadAll(yaml) as Array<{
        kind: string;
        metadata: { name: string; annotations: Record<string, string> };
        data?: unknown;
      }>
    ).find((o) => o.kind === "Secret" && o.metadata.name === "vc-database-db")!;
    expect(secret.data).to.equal(undefined);
    expect(secret.metadata.annotations[ANNOTATIONS.inlineCredential]).to.equal("true");
    const files = join(out, "render");
    expect((await runVc(["render", repo, "--cluster", "db", "--out", files])).code).to.equal(0);
    for (const f of filesUnder(files)) expect(leaks(readFileSync(f, "utf8"), PASSWORD), f).to.deep.equal([]);
  });

  it(
    "the dir: target writes no credential, and a second diff sees no drift (the withheld data is not a " + "change)",
    async () => {
      const target = `dir:${out}`;
      const applied = await runVc(["apply", repo, "--target", target]);
      expect(applied.code, applied.stderr).to.equal(0);
      expect(leaks(applied.stdout + applied.stderr, PASSWORD)).to.deep.equal([]);
      const files = filesUnder(out);
      expect(files.some((f) => f.endsWith("secret_vc-database-db.yaml"))).to.equal(true);
      for (const f of files) expect(leaks(readFileSync(f, "utf8"), PASSWORD), f).to.deep.equal([]);
      const secretFile = files.find((f) => f.endsWith("secret_vc-database-db.yaml"))!;
      expect(statSync(secretFile).mode & 0o777).to.equal(0o600);
      for (const output of ["text", "json", "markdown"]) {
        const diff = await runVc(["diff", repo, "--target", target, "--exit-code", "-o", output]);
        expect(diff.code, `${output}: ${diff.stdout}`).to.equal(0);
      }
    },
  );

  it(
    "only the live host gets the credential; diffs and describe against it mask it (before and after a " + "change)",
    async () => {
      const kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
      const applied = await runVc(["apply", repo, "--cluster", "db", ...kube]);
      expect(applied.code, applied.stderr).to.equal(0);
      expect(leaks(applied.stdout + applied.stderr, PASSWORD)).to.deep.equal([]);
      const live = server.get("v1", "Secret", "vc-db", "vc-database-db") as unknown as { data: Record<string, string> };
      expect(Buffer.from(live.data.endpoint!, "base64").toString()).to.equal(endpoint(PASSWORD));
      writeFileSync(join(repo, "clusters/db/values.yaml"), VALUES(NEW_PASSWORD));
      for (const output of ["text", "json", "markdown"]) {
        const diff = await runVc(["diff", repo, "--cluster", "db", ...kube, "-o", output]);
        expect(diff.code, diff.stderr).to.equal(0);
        const all = diff.stdout + diff.stderr;
        expect(leaks(all, PASSWORD), output).to.deep.equal([]);
        expect(leaks(all, NEW_PASSWORD), output).to.deep.equal([]);
        expect(all, output).to.include("vc-database-db");
      }
      for (const args of [["--config-only"], [], ["-o", "json"]]) {
        const d = await runVc(["describe", "db", "--repo", repo, "--kubeconfig", server.kubeconfigPath, ...args]);
        expect(d.code, d.stderr).to.equal(0);
        expect(leaks(d.stdout + d.stderr, NEW_PASSWORD), args.join(" ")).to.deep.equal([]);
        expect(leaks(d.stdout + d.stderr, PASSWORD), args.join(" ")).to.deep.equal([]);
      }
    },
  );
});
