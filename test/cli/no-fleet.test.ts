// A folder that is no fleet repository, and a fleet with an empty clusters/: validate, render, diff and apply say the
// same thing in the same words, and point at vc init.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";

const COMMANDS = ["validate", "render", "diff", "apply"];

describe("a folder without clusters/ and an empty clusters/", () => {
  let tmp: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), "vc-no-fleet-"));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it(
    "without clusters/: validate, render, diff and apply fail (exit 2) with the same words, suggesting vc init, " +
      "and write nothing",
    async () => {
      const said = new Set<string>();
      for (const command of COMMANDS) {
        const r = await runVc([command], { cwd: tmp });
        expect(r.code, command).to.equal(2);
        expect(r.stdout, command).to.equal("");
        said.add(r.stderr);
      }
      expect([...said]).to.have.length(1);
      const [message] = [...said];
      expect(message).to.include(`no clusters/ folder in ${tmp} or any folder above it`).and.to.include("vc init");
      expect(message).to.not.match(/\n\s+at /);
      expect(readdirSync(tmp)).to.deep.equal([]);
      // Given as a path, the same words again.
      const r = await runVc(["validate", tmp]);
      expect(r.stderr).to.equal(message);
    },
  );

  it(
    "with an empty clusters/ (a .gitkeep aside): each says it is empty, and succeeds with nothing to do; a named " +
      "cluster gets its own error",
    async () => {
      mkdirSync(join(tmp, "clusters"));
      writeFileSync(join(tmp, "clusters/.gitkeep"), "");
      const note =
        `note: ${join(tmp, "clusters")} is empty: add one folder clusters/<name>/ per virtual cluster (vc ` +
        `init writes an example)\n`;
      for (const command of COMMANDS) {
        const r = await runVc([command], { cwd: tmp });
        expect(r.code, `${command}: ${r.stderr}`).to.equal(0);
        expect(r.stderr.startsWith(note), `${command}: ${r.stderr}`).to.equal(true);
      }
      // Asking for a cluster by name gets the unknown-cluster error alone.
      const named = await runVc(["diff", "--cluster", "nope"], { cwd: tmp });
      expect(named.code).to.equal(1);
      expect(named.stderr).to.match(/^error: unknown cluster "nope"/);
      mkdirSync(join(tmp, "clusters/a"));
      writeFileSync(join(tmp, "clusters/a/values.yaml"), "{}\n");
      expect((await runVc(["validate"], { cwd: tmp })).stderr).to.not.include("is empty");
    },
  );
});
