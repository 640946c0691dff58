// Validates one cluster folder: its name, values files, cluster.yaml, mesh and certificate manifests, into a
// ClusterSpec when valid.
import { reservedNamespaceProblem } from "./host-namespace.js";
import type { KubeObject } from "../kube/object.js";
import { defaultHostNamespace, type ClusterSettings, type FolderManifest } from "../model/cluster.js";
import { hasErrors, type Diagnostic } from "../model/diagnostic.js";
import type { Values } from "../model/values.js";
import { VALUES_FILE, type ClusterFiles } from "../repo/layout.js";
import { loadYamlFile, loadYamlText, type LoadedFile } from "../repo/load.js";
import type { ReadResult } from "../repo/read.js";
import { MAX_CLUSTER_ALIAS_BYTES, MAX_CLUSTER_ALIAS_NODES } from "../repo/yaml.js";
import { folderBudget, objectsOverBudget, type FolderBudget } from "../repo/budget.js";
import { YamlPositions } from "../repo/positions.js";
import { isMapping, type Mapping } from "../repo/merge.js";
import { certificateRules, certManagerOffFinding, checkCertificateDocument } from "./certificate.js";
import { fileDiagnostic, SourceFile, type Finding } from "./finding.js";
import { folderClaims } from "./host-claims.js";
import { rememberSettingsSource, type ClusterResult } from "./result.js";
import { checkMeshDocument } from "./mesh.js";
import { meshRules } from "./mesh-rules.js";
import { clusterNameProblem } from "./names.js";
import { schemaFindings } from "./schema-errors.js";
import { defaultingValidatorFor } from "./schemas.js";
import { checkValuesDocument, kindOf, layerValues, type ValuesLayer } from "./values.js";

/**
 * Validates a cluster folder; `reads` holds files already read (within the budget's files and bytes), the others
 * are read here. Parsing stops at the first document past `budget.objects`: the folder is then invalid with that
 * error and the findings of the files before it.
 */
export function validateCluster(
  realRoot: string,
  files: ClusterFiles,
  reads?: ReadonlyMap<string, ReadResult>,
  budget: FolderBudget = folderBudget(),
): ClusterResult {
  const { name, dir } = files;
  const diagnostics: Diagnostic[] = [...files.diagnostics];
  const result: ClusterResult = { name, dir, valid: false, diagnostics };
  try {
    return validateWithin(realRoot, files, result, reads, budget);
  } catch (err) {
    if (!(err instanceof OverBudget)) throw err;
    diagnostics.push(err.diagnostic);
    delete result.values;
    delete result.spec;
    result.valid = false;
    return result;
  }
}

/** Thrown by a folder's loader at the first document past its budget: nothing more of the folder is parsed. */
class OverBudget extends Error {
  constructor(readonly diagnostic: Diagnostic) {
    super(diagnostic.message);
  }
}

function validateWithin(
  realRoot: string,
  files: ClusterFiles,
  result: ClusterResult,
  reads: ReadonlyMap<string, ReadResult> | undefined,
  budget: FolderBudget,
): ClusterResult {
  const { name, dir } = files;
  const diagnostics = result.diagnostics;
  if (files.clusterFile) result.clusterFile = files.clusterFile;
  const nameProblem = clusterNameProblem(name);
  if (nameProblem) {
    diagnostics.push(
      fileDiagnostic(
        dir,
        "error",
        "cluster-name",
        `folder name "${name}" is not a valid cluster name: ${nameProblem}; the folder was not read`,
      ),
    );
    return result;
  }

  // Values files, each checked on its own (positions point into the file that has the problem).
  if (!files.hasValuesYaml) {
    diagnostics.push(
      fileDiagnostic(
        `${dir}/${VALUES_FILE}`,
        "error",
        "missing-values",
        `missing ${VALUES_FILE}: every cluster folder needs one (an empty mapping {} takes every default)`,
      ),
    );
  }
  const load = folderLoader(realRoot, files, reads, budget);
  const layers: ValuesLayer[] = [];
  for (const file of files.values) {
    const doc = singleMapping(load, file, "values file", diagnostics);
    if (!doc) continue;
    const findings = checkValuesDocument(doc.doc);
    doc.source.report(findings, diagnostics);
    doc.source.flush(diagnostics);
    doc.source.release();
    if (findings.length === 0) layers.push(doc);
  }
  // Rules on the merged values run when every values file is clean (other problems of the folder do not stop them).
  let values: Values | undefined;
  if (layers.length === files.values.length) {
    const layered = layerValues(layers);
    diagnostics.push(...layered.diagnostics);
    values = layered.values;
  }

  // cluster.yaml (optional).
  let settings: ClusterSettings | undefined = { namespace: defaultHostNamespace(name), suspend: false, prune: true };
  if (files.clusterFile) {
    const doc = singleMapping(load, files.clusterFile, "cluster.yaml", diagnostics);
    if (doc) {
      rememberSettingsSource(result, doc.source);
      const copy = structuredClone(doc.doc);
      const validate = defaultingValidatorFor("cluster");
      if (validate(copy)) {
        const c = copy as Partial<ClusterSettings>;
        settings = {
          namespace: c.namespace ?? defaultHostNamespace(name),
          suspend: c.suspend ?? false,
          prune: c.prune ?? true,
          ...(c.force ? { force: true } : {}),
        };
      } else {
        settings = undefined;
        doc.source.report(schemaFindings("cluster", 0, doc.doc, validate.errors ?? []), diagnostics);
        doc.source.flush(diagnostics);
      }
      doc.source.release();
    } else {
      settings = undefined;
    }
  }

  // Reserved namespaces are refused after the cache (validate/host-namespace.ts): the reconciler's namespace may be
  // configured.
  if (settings) result.settings = settings;
  if (values) result.values = values;

  // Mesh manifests.
  const mesh = loadManifests(files.mesh, load, checkMeshDocument, diagnostics);
  mesh.report(meshRules(name, mesh.placed, values, mesh.complete));

  // Certificates: only while the certificate-manager integration is on (unknown while the values are invalid).
  const certManagerOff = values !== undefined && !values.integrations.certManager.enabled;
  const certs = loadManifests(
    files.certificates,
    load,
    (doc, index) => {
      const checked = checkCertificateDocument(doc, index);
      return certManagerOff ? { findings: [certManagerOffFinding(doc, index), ...checked.findings] } : checked;
    },
    diagnostics,
  );
  certs.report(certificateRules(name, certs.placed));

  if (!hasErrors(diagnostics) && values && settings) {
    result.spec = {
      name,
      dir,
      settings,
      values,
      valuesFiles: [...files.values],
      mesh: mesh.placed,
      certificates: certs.placed,
    };
    result.valid = true;
    const claims = folderClaims(result.spec);
    if (claims.length > 0) result.claims = claims;
  }
  return result;
}

/**
 * The documents of a cluster's manifest files (mesh/, certificates/), each checked by `check`: the valid objects in
 * file and document order, whether every document was valid, and `report`, which adds findings of rules across the
 * documents (then flushes each file's omitted-findings count).
 */
function loadManifests(
  files: readonly string[],
  load: (file: string) => LoadedFile,
  check: (doc: unknown, index: number) => { findings: Finding[]; object?: KubeObject },
  diagnostics: Diagnostic[],
): { placed: FolderManifest[]; complete: boolean; report(findings: ReadonlyArray<Finding & { file: string }>): void } {
  const placed: FolderManifest[] = [];
  const sources = new Map<string, SourceFile>();
  let complete = true;
  for (const file of files) {
    const loaded = load(file);
    if (!loaded.ok) {
      diagnostics.push(loaded.diagnostic);
      complete = false;
      continue;
    }
    const source = new SourceFile(file, loaded.text, loaded.events);
    sources.set(file, source);
    if (loaded.docs.every((d) => d === null)) {
      diagnostics.push(fileDiagnostic(file, "warning", "empty-file", "no documents in this file: nothing to apply"));
      source.release();
      continue;
    }
    for (let index = 0; index < loaded.docs.length; index++) {
      const doc = loaded.docs[index];
      if (doc === null) continue; // an empty document between separators
      const checked = check(doc, index);
      source.report(checked.findings, diagnostics);
      if (checked.object) placed.push({ file, index, object: checked.object });
      else complete = false;
    }
    source.release();
  }
  return {
    placed,
    complete,
    report(findings) {
      for (const f of findings) sources.get(f.file)!.report([f], diagnostics);
      for (const source of sources.values()) source.flush(diagnostics);
    },
  };
}

/**
 * The host's, the platform's and `default` are never a virtual cluster's home (host-namespace.ts; also used by vc
 * create).
 */
export function reservedNamespaceRule(ns: string): { severity: "error" | "warning"; message: string } | undefined {
  const message = reservedNamespaceProblem(ns);
  return message ? { severity: "error", message } : undefined;
}

/**
 * The loader of one cluster folder: each file within the per-file limits of the YAML loader, all of them
 * together within MAX_CLUSTER_ALIAS_NODES and MAX_CLUSTER_ALIAS_BYTES of alias expansion (a file that crosses it is
 * refused) and within the folder's budget of documents (OverBudget is thrown at the first document past it).
 */
function folderLoader(
  realRoot: string,
  files: ClusterFiles,
  reads: ReadonlyMap<string, ReadResult> | undefined,
  budget: FolderBudget,
): (file: string) => LoadedFile {
  let used = 0;
  let usedBytes = 0;
  let objects = 0;
  const manifests = new Set([...files.mesh, ...files.certificates]);
  return (file) => {
    const read = reads?.get(file);
    const loaded =
      read === undefined
        ? loadYamlFile(realRoot, file)
        : read.ok
          ? loadYamlText(file, read.text)
          : { ok: false as const, diagnostic: fileDiagnostic(file, "error", read.code, read.message) };
    if (!loaded.ok) return loaded;
    for (let d = 0; manifests.has(file) && d < loaded.docs.length; d++) {
      if (loaded.docs[d] === null || ++objects <= budget.objects) continue;
      const at = new YamlPositions(loaded.text, loaded.events).locate(d, [], "value");
      throw new OverBudget(objectsOverBudget(file, at.line, at.col, files.dir, budget));
    }
    if (loaded.aliasNodes === 0 && loaded.aliasBytes === 0) return loaded;
    used += loaded.aliasNodes;
    usedBytes += loaded.aliasBytes;
    if (used <= MAX_CLUSTER_ALIAS_NODES && usedBytes <= MAX_CLUSTER_ALIAS_BYTES) return loaded;
    const message =
      used > MAX_CLUSTER_ALIAS_NODES
        ? `YAML aliases in this cluster's files expand to more than ${MAX_CLUSTER_ALIAS_NODES} extra nodes ` +
          `together (this file crosses the budget): refused (an alias bomb?)`
        : `YAML aliases in this cluster's files expand to more than ${MAX_CLUSTER_ALIAS_BYTES} extra bytes ` +
          `together once repeated (this file crosses the budget): refused (an alias bomb?)`;
    return { ok: false, diagnostic: fileDiagnostic(file, "error", "yaml-alias-bomb", message) };
  };
}

/** A file that must hold one mapping document (values files, cluster.yaml); an empty file is `{}` with a warning. */
function singleMapping(
  load: (file: string) => LoadedFile,
  file: string,
  what: string,
  diagnostics: Diagnostic[],
): ValuesLayer | undefined {
  const loaded = load(file);
  if (!loaded.ok) {
    diagnostics.push(loaded.diagnostic);
    return undefined;
  }
  const source = new SourceFile(file, loaded.text, loaded.events);
  const docs = loaded.docs;
  if (docs.length === 0 || (docs.length === 1 && docs[0] === null)) {
    diagnostics.push(fileDiagnostic(file, "warning", "empty-file", `empty ${what}: every default applies`));
    return { source, doc: {} };
  }
  if (docs.length > 1) {
    diagnostics.push(
      source.diagnostic({
        doc: 1,
        path: [],
        at: "value",
        severity: "error",
        code: "documents",
        message: `a ${what} holds one document, found ${docs.length}`,
      }),
    );
    return undefined;
  }
  if (!isMapping(docs[0])) {
    diagnostics.push(
      source.diagnostic({
        doc: 0,
        path: [],
        at: "value",
        severity: "error",
        code: "not-a-mapping",
        message: `a ${what} must be a mapping, found ${kindOf(docs[0])}`,
      }),
    );
    return undefined;
  }
  return { source, doc: docs[0] as Mapping };
}
