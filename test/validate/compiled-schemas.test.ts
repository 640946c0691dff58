// The precompiled validators `npm run build` ships (ajv standalone code) decide exactly as validators compiled at run
// time: same verdict, same errors, same defaults filled in, over the example repository and broken variants of it.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { loadAll } from "js-yaml";
import { writeCompiledSchemas } from "../../src/validate/compile-schemas.js";
import {
  ajvOptions,
  compiledFileName,
  precompiled,
  SCHEMA_NAMES,
  schemaDoc,
  type SchemaName,
  type ValidatorMode,
} from "../../src/validate/schemas.js";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Documents to validate against each schema: the example repository's, and variants that break it. */
function samples(name: SchemaName): unknown[] {
  const docs: unknown[] = [{}, [], "text", null, { unknownKey: 1 }];
  const clusters = join(ROOT, "clusters");
  for (const cluster of readdirSync(clusters)) {
    const dir = join(clusters, cluster);
    const files = readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".yaml"));
    for (const f of files) {
      const kind = f.startsWith("mesh/")
        ? "mesh"
        : f.startsWith("certificates/")
          ? "certmanager"
          : f === "cluster.yaml"
            ? "cluster"
            : f.startsWith("values")
              ? "values"
              : "other";
      for (const doc of loadAll(readFileSync(join(dir, f), "utf8"))) {
        const target =
          kind === "mesh" || kind === "certmanager"
            ? `${kind}/${String((doc as { kind?: string }).kind ?? "").toLowerCase()}`
            : kind;
        if (target !== name) continue;
        docs.push(doc);
        docs.push({ ...(doc as object), unexpected: true });
        const spec = (doc as { spec?: unknown }).spec;
        if (spec && typeof spec === "object")
          docs.push({
            ...(doc as object),
            spec: { ...spec, hosts: 7, servers: "x", http: [{ route: [{ weight: "heavy" }] }] },
          });
        if (spec && typeof spec === "object" && target === "certmanager/certificate")
          docs.push({
            ...(doc as object),
            spec: {
              ...spec,
              dnsNames: ["Not A Host"],
              duration: "90 days",
              usages: ["server-auth"],
              privateKey: { size: "big" },
            },
          });
        const cp = (doc as { controlPlane?: unknown }).controlPlane;
        if (cp && typeof cp === "object")
          docs.push({
            ...(doc as object),
            controlPlane: { ...cp, statefulSet: { replicas: "two", resources: { requests: { cpu: 5 } } } },
          });
      }
    }
  }
  if (name === "cluster") docs.push({ namespace: "ns", suspend: "yes" }, { namespace: "Bad_NS" });
  if (name === "policy") docs.push({ hosts: ["*.example.com"] }, { clusters: 3 });
  if (name === "groups")
    docs.push(
      { groups: { prod: { matchLabels: { tier: "prod" } } } },
      { groups: { Bad: { matchLabels: {} } } },
      { groups: { prod: { selector: {} } } },
    );
  if (name === "rollout")
    docs.push(
      {
        waves: [
          { name: "canary", selector: { matchLabels: { canary: "true" } } },
          { name: "rest", percent: 50 },
        ],
        maxUnavailable: "25%",
        pause: "manual",
      },
      { waves: [] },
      { waves: [{ name: "a" }], maxUnavailable: 0, onFailure: "retry" },
    );
  if (name === "cluster") docs.push({ labels: { tier: "prod", region: "eu" } }, { labels: { tier: ["prod"] } });
  return docs;
}

describe("validate: precompiled schemas", function () {
  this.timeout(60_000);
  let dir: string;
  let url: URL;
  before(() => {
    // Inside the package, as dist/schemas is: the generated code requires ajv's runtime helpers from node_modules.
    mkdirSync(join(ROOT, "dist"), { recursive: true });
    dir = mkdtempSync(join(ROOT, "dist", "test-compiled-"));
    url = pathToFileURL(`${dir}/`);
    writeCompiledSchemas(url);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const mode of ["strict", "defaulting"] as ValidatorMode[]) {
    for (const name of SCHEMA_NAMES) {
      it(`${name} (${mode}): same verdicts, errors and defaults as a run-time compile`, () => {
        const loaded = precompiled(name, mode, url);
        expect(loaded, "the precompiled validator matches its schema").to.be.a("function");
        const compiled = new Ajv2020(ajvOptions(mode)).compile(schemaDoc(name));
        const docs = samples(name);
        let invalid = 0;
        for (const doc of docs) {
          const a = structuredClone(doc);
          const b = structuredClone(doc);
          const okA = loaded!(a);
          const okB = compiled(b);
          expect(okA, JSON.stringify(doc)).to.equal(okB);
          expect(loaded!.errors ?? null, JSON.stringify(doc)).to.deep.equal(compiled.errors ?? null);
          expect(a, "defaults filled in alike").to.deep.equal(b);
          if (!okA) invalid++;
        }
        expect(invalid, "some samples are invalid").to.be.greaterThan(0);
        expect(docs.length - invalid, "some samples are valid").to.be.greaterThan(0);
      });
    }
  }

  it("a precompiled validator made from other schema text (or a damaged file) is not used", () => {
    // Fresh files (a process loads each once): one made from other schema text, one damaged.
    const other = mkdtempSync(join(ROOT, "dist", "test-compiled-"));
    try {
      const otherUrl = pathToFileURL(`${other}/`);
      writeCompiledSchemas(otherUrl);
      const stale = join(other, compiledFileName("values", "strict"));
      writeFileSync(
        stale,
        readFileSync(stale, "utf8").replace(
          /module\.exports\.compiledKey = "[0-9a-f]+"/,
          'module.exports.compiledKey = "0000"',
        ),
      );
      expect(precompiled("values", "strict", otherUrl)).to.equal(undefined);
      writeFileSync(join(other, compiledFileName("cluster", "strict")), "this is not javascript {");
      expect(precompiled("cluster", "strict", otherUrl)).to.equal(undefined);
      expect(precompiled("policy", "strict", otherUrl), "an untouched one is used").to.be.a("function");
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    expect(precompiled("values", "strict", pathToFileURL(join(dir, "missing/")))).to.equal(undefined);
  });
});
