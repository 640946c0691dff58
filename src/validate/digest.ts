// The digest of what a cluster folder's validation depends on (its bytes, the fleet bases, policy.yaml, the schemas
// and vc's version), and the summary a record keeps with it, so that a new process can skip validating a folder that
// has not changed since a reconciler recorded it.
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FLEET_DIR } from "../repo/fleet-base.js";
import { POLICY_FILE } from "./policy-rules.js";
import type { ClusterSettings } from "../model/cluster.js";
import type { ClusterResult, FolderClaim } from "./result.js";

/**
 * A folder's summary as a record keeps it (records/status.ts `validated`): what the index of a run needs of a valid
 * folder (its settings and public-host claims), and the digest of the inputs that gave it.
 */
export interface ValidatedFolder {
  /** SHA-256 (hex) of the folder's validation inputs: folderDigest. */
  digest: string;
  settings: { namespace: string; suspend: boolean; prune: boolean; force?: boolean };
  claims?: FolderClaim[];
}

/** The files of fleet/ a folder's validation reads (the bases and groups; not the rollout, read on its own). */
const FLEET_FILE = /^(values(\.[^/]+)?|groups)\.ya?ml$/;

/**
 * What every folder's validation shares beyond its own bytes, as one string: policy.yaml and the base files of fleet/
 * (names and bytes). Read once per run; a file that cannot be read counts by its error.
 */
export function sharedInputs(realRoot: string): string {
  const h = createHash("sha256");
  const add = (rel: string): void => {
    h.update(`\0${rel}\0`);
    try {
      if (!lstatSync(join(realRoot, rel)).isFile()) return void h.update("!not a file");
      h.update(readFileSync(join(realRoot, rel)));
    } catch (err) {
      h.update(`!${(err as NodeJS.ErrnoException).code ?? "unreadable"}`);
    }
  };
  add(POLICY_FILE);
  let names: string[] = [];
  try {
    names = readdirSync(join(realRoot, FLEET_DIR)).filter((n) => FLEET_FILE.test(n));
  } catch {
    names = [];
  }
  for (const n of names.sort()) add(`${FLEET_DIR}/${n}`);
  return h.digest("hex");
}

/** A folder's digest: its cache key (its bytes, budget, the schemas, vc's version) with the shared inputs'. */
export function folderDigest(key: string, shared: string): string {
  return createHash("sha256").update(`${key}\0${shared}`).digest("hex");
}

/**
 * What a record keeps of a valid folder (an invalid one is not kept: it is validated again, to say why): the digest of
 * its inputs, its settings and the public hosts it claims. Undefined without a digest.
 */
export function validatedOf(
  digest: string | undefined,
  settings: ClusterSettings,
  claims: readonly FolderClaim[] = [],
): ValidatedFolder | undefined {
  if (digest === undefined) return undefined;
  const { namespace, suspend, prune, force } = settings;
  const kept = claims.map((c) => ({ host: c.host, file: c.file, doc: c.doc, path: [...c.path] }));
  return {
    digest,
    settings: { namespace, suspend, prune, ...(force ? { force } : {}) },
    ...(kept.length ? { claims: kept } : {}),
  };
}

/** The summary result of a folder whose digest matches what its record kept: validated before, not again. */
export function summaryOf(
  name: string,
  dir: string,
  clusterFile: string | undefined,
  v: ValidatedFolder,
): ClusterResult {
  return {
    name,
    dir,
    valid: true,
    ...(clusterFile ? { clusterFile } : {}),
    settings: { ...v.settings },
    ...(v.claims ? { claims: v.claims.map((c) => ({ ...c, path: [...c.path] })) } : {}),
    diagnostics: [],
    digest: v.digest,
    recorded: true,
  };
}

/** A `validated` value read back from a record, or undefined when it is not one vc wrote (damaged, hand-edited). */
export function parseValidated(x: unknown): ValidatedFolder | undefined {
  if (typeof x !== "object" || x === null) return undefined;
  const v = x as Record<string, unknown>;
  const s = v.settings as Record<string, unknown> | undefined;
  if (typeof v.digest !== "string" || !/^[0-9a-f]{64}$/.test(v.digest)) return undefined;
  if (typeof s !== "object" || s === null || typeof s.namespace !== "string") return undefined;
  if (typeof s.suspend !== "boolean" || typeof s.prune !== "boolean") return undefined;
  if (s.force !== undefined && s.force !== true) return undefined;
  const claims = v.claims;
  if (claims !== undefined && (!Array.isArray(claims) || !claims.every(isClaim))) return undefined;
  return {
    digest: v.digest,
    settings: { namespace: s.namespace, suspend: s.suspend, prune: s.prune, ...(s.force ? { force: true } : {}) },
    ...(claims ? { claims: claims as FolderClaim[] } : {}),
  };
}

function isClaim(x: unknown): x is FolderClaim {
  if (typeof x !== "object" || x === null) return false;
  const c = x as Record<string, unknown>;
  return (
    typeof c.host === "string" &&
    typeof c.file === "string" &&
    typeof c.doc === "number" &&
    Array.isArray(c.path) &&
    c.path.every((p) => typeof p === "string" || typeof p === "number")
  );
}
