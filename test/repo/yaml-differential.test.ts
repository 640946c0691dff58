// The loader against bare js-yaml on real public YAML: every file gives the same values of the same types, or both
// refuse it.
import { requireOrSkip } from "../support/requires.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { loadAll } from "js-yaml";
import { parseYaml } from "../../src/repo/yaml.js";

const SAMPLE = new URL("../fixtures/public-yaml/", import.meta.url).pathname;

function yamlFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e.name)) out.push(p);
    }
  };
  walk(root);
  return out.sort();
}

/** Files where the loader and js-yaml disagree (values, types, or one refusing what the other reads). */
function differences(root: string): { files: number; documents: number; refused: number; differ: string[] } {
  let documents = 0;
  let refused = 0;
  const differ: string[] = [];
  const files = yamlFiles(root);
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    let expected: unknown[] | undefined;
    try {
      expected = loadAll(text);
    } catch {
      expected = undefined;
    }
    const got = parseYaml(text);
    const name = relative(root, file);
    if (expected === undefined) {
      if (got.ok) differ.push(`${name}: js-yaml refuses it, the loader reads it`);
      else refused++;
    } else if (!got.ok) {
      differ.push(`${name}: refused by the loader: ${got.error.message}`);
    } else if (!isDeepStrictEqual(got.docs, expected)) {
      differ.push(`${name}: different values`);
    } else {
      documents += expected.length;
    }
  }
  return { files: files.length, documents, refused, differ };
}

describe("repo/yaml: differential against js-yaml on public YAML", function () {
  this.timeout(300_000);

  it("the sample in test/fixtures/public-yaml: same values and types in every file", () => {
    const r = differences(SAMPLE);
    expect(r.differ).to.deep.equal([]);
    expect(r.files).to.equal(228);
    expect(r.refused).to.equal(7);
    expect(r.documents).to.be.greaterThan(400);
  });

  it(
    "the whole public corpus named by VC_YAML_CORPUS (.tar.xz or folder): same values and types in " + "every file",
    function () {
      const corpus = process.env.VC_YAML_CORPUS;
      // .ci/run sets it: there a missing corpus fails. Locally: VC_YAML_CORPUS=path/to/public-yaml.tar.xz npx mocha
      // test/repo/yaml-differential.test.ts
      requireOrSkip(
        this,
        corpus ? undefined : "the public YAML corpus",
        "set VC_YAML_CORPUS to its .tar.xz or folder: scripts/fetch-yaml-corpus.sh writes it and prints the path " +
          "(docs/testing.md)",
      );
      let root = corpus!;
      let unpacked: string | undefined;
      if (statSync(corpus!).isFile()) {
        unpacked = mkdtempSync(join(tmpdir(), "vc-corpus-"));
        execFileSync("tar", ["-xJf", corpus!, "-C", unpacked]);
        root = unpacked;
      }
      try {
        const r = differences(root);
        expect(r.differ).to.deep.equal([]);
        expect(r.files).to.be.greaterThan(3000);
      } finally {
        if (unpacked) rmSync(unpacked, { recursive: true, force: true });
      }
    },
  );
});
