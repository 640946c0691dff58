// One masking rule, planted values, every output: diffs (text, JSON, markdown, live side included), validation
// messages, describe's values, status records, log lines. Nothing planted may appear; a changed credential shows as
// changed.
import { expect } from "chai";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatDiagnostic } from "../../src/model/diagnostic.js";
import { maskUrlCredentials, maskValues } from "../../src/model/secrets.js";
import { jsonLogger } from "../../src/model/log.js";
import { record } from "../../src/records/status.js";
import { runVc } from "../support/vc.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "clusters");
const PLANTED = [
  "enc-Key-0ld-1111",
  "enc-Key-N3w-2222",
  "AKIAOLD0000000000001",
  "AKIANEW0000000000002",
  "urlPw-Old-3333",
  "urlPw-New-4444",
];
/** Credentials under names outside the substring words, and inside a connection string: old and new of each. */
const ABBREVIATED = ["DB_PWD", "MYSQL_PW", "JWT", "SESSION_COOKIE_SIG"];
const abbreviated = (round: "old" | "new") => [
  ...ABBREVIATED.map((name, i) => `${name.toLowerCase()}-${round}-${i}x`),
  `conn-${round}-pw9`,
];
PLANTED.push(...abbreviated("old"), ...abbreviated("new"));

const envValues = (encryption: string, access: string, urlPassword: string, round: "old" | "new") => `controlPlane:
  statefulSet:
    env:
      - name: ENCRYPTION_KEY
        value: ${encryption}
      - name: AWS_ACCESS_KEY_ID
        value: ${access}
      - name: CALLBACK
        value: https://hook:${urlPassword}@hooks.example.com/vc
${ABBREVIATED.map((name, i) => `      - name: ${name}\n        value: ` + `${abbreviated(round)[i]}\n`).join(
  "",
)}      - name: CONN
        value: "Host=db;Username=app;Password=${abbreviated(round)[4]};SSL Mode=Require"
      - name: LOG_LEVEL
        value: debug
`;

describe("security: credentials masked in every output", function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-mask-"));
    repo = join(tmp, "repo");
    cpSync(EXAMPLE, join(repo, "clusters"), { recursive: true });
    writeFileSync(
      join(repo, "clusters", "minimal", "values.env.yaml"),
      envValues(PLANTED[0]!, PLANTED[2]!, PLANTED[4]!, "old"),
    );
    const applied = await runVc(["apply", repo, "--target", `dir:${join(tmp, "out")}`]);
    expect(applied.code, applied.stderr).to.equal(0);
    writeFileSync(
      join(repo, "clusters", "minimal", "values.env.yaml"),
      envValues(PLANTED[1]!, PLANTED[3]!, PLANTED[5]!, "new"),
    );
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  for (const output of ["text", "json", "markdown"]) {
    it(`vc diff -o ${output}: no planted value on either side; changed credentials show as changed`, async () => {
      const res = await runVc([
        "diff",
        repo,
        "--cluster",
        "minimal",
        "--target",
        `dir:${join(tmp, "out")}`,
        "-o",
        output,
      ]);
      expect(res.code, res.stderr).to.equal(0);
      const all = res.stdout + res.stderr;
      for (const p of PLANTED) expect(all, p).to.not.include(p);
      expect(all).to.include("<masked, changed>").and.include("<masked, before>");
      expect(all).to.include("debug");
    });
  }

  it("the hydrated manifests are the only place the values are (the target itself, 0600 for Secrets)", () => {
    expect(readFileSync(join(repo, "clusters", "minimal", "values.env.yaml"), "utf8")).to.include(PLANTED[1]);
  });

  it(
    "validation messages, describe's values, status records and log lines mask URL passwords and secret " +
      "env values",
    () => {
      expect(
        formatDiagnostic({
          file: "f",
          line: 1,
          col: 1,
          severity: "error",
          code: "x",
          message: `bad endpoint postgres://u:${PLANTED[4]}@db/x`,
        }),
      ).to.not.include(PLANTED[4]);
      expect(maskUrlCredentials(`a redis://:${PLANTED[5]}@r:6379 b`)).to.equal("a redis://:<masked>@r:6379 b");
      const values = {
        controlPlane: {
          statefulSet: {
            env: [
              { name: "ENCRYPTION_KEY", value: PLANTED[0] },
              { name: "HOOK", value: `https://u:${PLANTED[4]}@h` },
              ...ABBREVIATED.map((name, i) => ({ name, value: abbreviated("old")[i] })),
              { name: "CONN", value: `Server=db;Password=${abbreviated("old")[4]};` },
            ],
          },
          backingStore: { database: { external: { endpoint: "" } } },
        },
      };
      const masked = JSON.stringify(maskValues(values as never));
      for (const p of PLANTED) expect(masked).to.not.include(p);
      const status = record(undefined, "c", "vc-c", {
        revision: "r",
        time: "t",
        durationMs: 1,
        result: "failed",
        counts: { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 1 },
        message: `cannot fetch https://u:${PLANTED[5]}@git/x; server said Password=${abbreviated("new")[4]}; rejected`,
      });
      expect(JSON.stringify(status)).to.not.include(PLANTED[5]).and.not.include(abbreviated("new")[4]);
      const lines: string[] = [];
      jsonLogger({ out: { write: (l: string) => lines.push(l) } }).warn("fetch failed", {
        url: `https://u:${PLANTED[5]}@git/x`,
        JWT: abbreviated("new")[2],
      });
      expect(lines.join("")).to.not.include(PLANTED[5]).and.not.include(abbreviated("new")[2]);
    },
  );
});

describe("security: vc validate never prints a URL password, in any format", () => {
  it("text, json and github output of a finding that quotes a URL with a password", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "vc-mask-validate-"));
    try {
      const dir = join(tmp, "clusters", "x");
      cpSync(join(EXAMPLE, "minimal"), dir, { recursive: true });
      // A value pasted into the wrong key: the schema's message quotes it.
      writeFileSync(
        join(dir, "values.extra.yaml"),
        'controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: "postgres://u:Pl4nted-Pw@db/vc"\n',
      );
      for (const format of ["text", "json", "github"]) {
        const res = await runVc(["validate", tmp, "--format", format]);
        expect(res.code, format).to.equal(1);
        expect(res.stdout + res.stderr, format).to.include("postgres://u:<masked>@db/vc");
        expect(res.stdout + res.stderr, format).to.not.include("Pl4nted-Pw");
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

/** Issue #38 case 10: the ten values planted through diff and describe, under names that say nothing. */
const CASE10: Record<string, string> = {
  NPMRC: "//registry.npmjs.org/:_authToken=PlantD01-npmrc",
  GIT_REMOTE: "https://f00dTok3nUser02@git.example.com/org/a.git",
  ALERTS: "https://hooks.slack.com/services/T0PLANT03/B0PLANT03/PlantWebhook03Secret01",
  DOCTL: "-t dop_v1_0404040404040404040404040404040404040404040404040404040404040404",
  SA_JSON: '{"type":"service_account","private_key_id":"05f8e7d6c5b4a39281706f5e4d3c2b1a"}',
  HEADERS: "Cookie: sid=PlantCookie06",
  PUBLISH: "npm_Plant07Plant07Plant07Plant07Plant07x",
  CLONE: "ghp_Plant08Plant08Plant08Plant08Plant08",
  DB: "postgres://app:PlantDbPw09@db.example/x",
  LLM: "sk-proj-Plant10Plant10Plant10Plant10Plant10",
};
/** The part of each planted value that is the credential. */
const CASE10_SECRETS = [
  "PlantD01-npmrc",
  "f00dTok3nUser02",
  "PlantWebhook03Secret01",
  "0404040404040404040404040404040404040404040404040404040404040404",
  "05f8e7d6c5b4a39281706f5e4d3c2b1a",
  "PlantCookie06",
  "Plant07Plant07Plant07",
  "Plant08Plant08Plant08",
  "PlantDbPw09",
  "Plant10Plant10Plant10",
];

describe("security: issue #38 case 10, ten credentials by shape through diff and describe", function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-mask10-"));
    repo = join(tmp, "repo");
    cpSync(EXAMPLE, join(repo, "clusters"), { recursive: true });
    const applied = await runVc(["apply", repo, "--target", `dir:${join(tmp, "out")}`]);
    expect(applied.code, applied.stderr).to.equal(0);
    const env = Object.entries(CASE10)
      .map(([name, value]) => `      - name: ${name}\n        value: ${JSON.stringify(value)}\n`)
      .join("");
    writeFileSync(
      join(repo, "clusters", "minimal", "values.env.yaml"),
      `controlPlane:\n  statefulSet:\n    env:\n${env}      - name: LOG_LEVEL\n        value: debug\n`,
    );
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  for (const output of ["text", "json", "markdown"]) {
    it(`vc diff -o ${output} shows none of the 10`, async () => {
      const args = ["diff", repo, "--cluster", "minimal", "--target", `dir:${join(tmp, "out")}`, "-o", output];
      const res = await runVc(args);
      expect(res.code, res.stderr).to.equal(0);
      const all = res.stdout + res.stderr;
      expect(all).to.include("LOG_LEVEL");
      expect(CASE10_SECRETS.filter((s) => all.includes(s))).to.deep.equal([]);
    });
  }

  for (const output of ["yaml", "json"]) {
    it(`vc describe --config-only -o ${output} shows none of the 10`, async () => {
      const res = await runVc(["describe", "minimal", "--config-only", "--repo", repo, "-o", output]);
      expect(res.code, res.stderr).to.equal(0);
      expect(res.stdout).to.include("LOG_LEVEL");
      expect(CASE10_SECRETS.filter((s) => res.stdout.includes(s))).to.deep.equal([]);
    });
  }
});
