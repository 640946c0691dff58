import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

// The layer order of src/ (docs/architecture.md): a folder imports only folders of a lower rank, type imports
// included; no two files import each other, directly or round a loop.
const SRC = join(import.meta.dirname, "..", "src");
const ENTRY_POINTS = new Set(["metrics-proxy/main.ts"]);

/** Each folder of src/ and its rank, lowest first. Folders of one rank may not import each other. */
const LAYERS: ReadonlyArray<readonly string[]> = [
  ["util", "kube", "translate"], // contract: helpers of no domain; Kubernetes object helpers and quantities; the naming contract
  ["model"], // contract: the cluster's types, diagnostics, errors, masking, logging
  ["repo", "git", "host"], // input: cluster folders and YAML; git; the host's API client
  ["claims"], // public-host claims: the one rule validate, plan and the kube sink share
  ["validate"], // stage: schemas and rules
  ["render"], // stage: host objects with translated names
  ["plan"], // stage: normalise, compare, order, prune guard, gates
  ["records"], // vc's records: format and stores
  ["sinks"], // where a plan goes: the live host, a folder of manifests
  ["pipeline"], // load -> validate -> render -> plan -> apply, for a cluster and a fleet: the only driver
  ["health"], // health rules of a cluster's objects
  ["rollout"], // progressive rollouts of the fleet's bases
  ["ops", "init", "metrics-proxy"], // operations and doctor; vc init; the proxy deployable
  ["ui"], // the fleet page: its model, API, event stream and server; vc ui's reads of a target
  ["reconciler"], // the loop (it serves the fleet page too)
  ["cli"], // entry: one file per command
];

const RANK = new Map(LAYERS.flatMap((folders, rank) => folders.map((f) => [f, rank] as const)));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

interface Import {
  /** The imported file, relative to src/, or a package name. */
  to: string;
  /** `import type` or every name imported as a type: erased at run time. */
  typeOnly: boolean;
  /** `import()`: loaded when called. */
  dynamic: boolean;
}

/** Every import and re-export of a file: static, type-only and dynamic. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const out: Import[] = [];
  const resolveSpec = (spec: string) =>
    spec.startsWith(".") ? relative(SRC, join(dirname(file), spec.replace(/\.js$/, ".ts"))) : spec;
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?([^"';]*?\sfrom\s+)?"([^"]+)"/gm)) {
    const names = /\{([^}]*)\}/.exec(m[2] ?? "")?.[1];
    const allTypes =
      names !== undefined &&
      !/^\s*(?:import|export)\s+[\w*]/.test(m[0].replace(/^(import|export)\s+type\s/, "")) &&
      names
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
        .every((s) => s.startsWith("type "));
    out.push({ to: resolveSpec(m[3]!), typeOnly: !!m[1] || allTypes, dynamic: false });
  }
  for (const m of text.matchAll(/import\(\s*"([^"]+)"\s*\)/g))
    out.push({ to: resolveSpec(m[1]!), typeOnly: false, dynamic: true });
  return out;
}

const folderOf = (rel: string): string => (rel.includes("/") ? rel.slice(0, rel.indexOf("/")) : "(root)");

/** Static imports and re-exports that load a module (not `import type`, nor `import()`). */
function staticImports(file: string): string[] {
  return importsOf(file)
    .filter((i) => !i.typeOnly && !i.dynamic)
    .map((i) => i.to);
}

/** The packages reached from `entries` (files under src/) through static imports. */
function packagesReached(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const rel = queue.pop()!;
    if (seen.has(rel)) continue;
    seen.add(rel);
    for (const to of staticImports(join(SRC, rel))) {
      if (!to.startsWith("..") && to.endsWith(".ts")) queue.push(to);
      else if (!to.startsWith("node:"))
        packages.add(to.startsWith("@") ? to.split("/").slice(0, 2).join("/") : to.split("/")[0]!);
    }
  }
  return packages;
}

/** The strongly connected components of more than one node (Tarjan), each sorted. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("layers", () => {
  const files = sources(SRC).map((f) => relative(SRC, f));

  it("every folder of src/ has a rank, and there are no files at src/'s top", () => {
    const folders = [...new Set(files.map(folderOf))].sort();
    expect(folders.filter((f) => !RANK.has(f))).to.deep.equal([]);
  });

  it("a folder imports only folders of a lower rank (type imports included)", () => {
    const offenders: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      if (ENTRY_POINTS.has(file)) continue;
      for (const i of importsOf(join(SRC, file))) {
        if (i.to.startsWith("..") || !i.to.endsWith(".ts")) continue;
        const to = folderOf(i.to);
        if (to === from) continue;
        if ((RANK.get(to) ?? -1) >= (RANK.get(from) ?? -1))
          offenders.push(`${file} imports ${i.to} (${from} -> ${to})`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });

  it("no file cycle: no two files of src/ import each other, directly or round a loop", () => {
    const graph = new Map<string, string[]>();
    for (const file of files) {
      graph.set(
        file,
        importsOf(join(SRC, file))
          .filter((i) => !i.dynamic && i.to.endsWith(".ts") && !i.to.startsWith(".."))
          .map((i) => i.to),
      );
    }
    expect(cycles(graph)).to.deep.equal([]);
  });

  it("the rule sees a backward edge and a cycle (the checks can fail)", () => {
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", ["a"]],
          ["c", ["a"]],
        ]),
      ),
    ).to.deep.equal([["a", "b"]]);
    expect(RANK.get("validate")!).to.be.lessThan(RANK.get("render")!);
    expect(RANK.get("records")!).to.be.greaterThan(RANK.get("plan")!);
  });

  it("commands that never reach a host do not load the Kubernetes client (about 0.8 s of start-up)", () => {
    // What `vc validate` and `vc render` load: main.ts, the request budget its hook sets, and the command's module.
    for (const command of ["cli/validate.ts", "cli/render.ts"]) {
      const reached = packagesReached(["cli/main.ts", "host/budget.ts", command]);
      expect([...reached], command)
        .to.include("js-yaml")
        .and.not.include("@kubernetes/client-node");
    }
  });

  it("nothing below the command line imports src/cli/ (only the entry points do)", () => {
    const offenders: string[] = [];
    for (const file of files) {
      if (file.startsWith("cli/") || ENTRY_POINTS.has(file)) continue;
      for (const i of importsOf(join(SRC, file)))
        if (i.to.startsWith("cli/")) offenders.push(`${file} imports ${i.to}`);
    }
    expect(offenders).to.deep.equal([]);
  });
});
