// Which source owns a cluster on the host: the owner name (a label value) every object and status vc writes carries,
// and its default from the repository.
import { createHash } from "node:crypto";

/** An owner name that is not a label value. */
export class OwnerError extends Error {}

/** Environment variable that sets the owner name when no --owner is given. */
export const OWNER_ENV = "VC_OWNER";

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/**
 * Why `name` cannot be an owner name (it must be a label value: at most 63 letters, digits, "-", "_", "."), or
 * undefined.
 */
export function ownerProblem(name: string): string | undefined {
  if (LABEL_VALUE.test(name)) return undefined;
  return (
    "an owner name is a label value: 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter " +
    "or digit"
  );
}

/**
 * A repository's location without scheme, credentials, port, `.git` or trailing slash, host in lower case:
 * `https://tok@GitHub.com/acme/fleet.git` and `git@github.com:acme/fleet` both give `github.com/acme/fleet`.
 * Anything else (a folder) is returned as it is.
 */
export function canonicalRepo(url: string): string {
  const scp = /^[\w.-]+@([\w.-]+):(.+)$/.exec(url);
  let host: string;
  let path: string;
  if (scp) {
    host = scp[1]!;
    path = scp[2]!;
  } else {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return url;
    }
    if (!parsed.host || parsed.protocol === "file:") return url;
    host = parsed.hostname;
    path = parsed.pathname;
  }
  return `${host.toLowerCase()}/${path
    .replace(/^\/+/, "")
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")}`;
}

/**
 * The default owner name of a source: the repository's last path segment and the folder holding clusters/ within
 * it (when not the root), then 10 hex characters of a hash of both, so that two repositories (or two fleets in one
 * repository) get different names and the same fleet gets the same one wherever vc runs (CI, the reconciler).
 */
export function defaultOwner(repo: string, subdir = ""): string {
  const canonical = canonicalRepo(repo);
  const digest = createHash("sha256").update(`${canonical}\n${subdir}`).digest("hex").slice(0, 10);
  const base = `${canonical.split("/").filter(Boolean).at(-1) ?? "fleet"}${subdir ? `-${subdir}` : ""}`;
  const slug = base
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return slug ? `${slug}-${digest}` : digest;
}

/**
 * The owner name to use: `flag` (--owner), else $VC_OWNER, else the default of the fleet's location. Throws on an
 * invalid name.
 */
export function chooseOwner(flag: string | undefined, location: { repo: string; subdir: string }): string {
  const given = flag ?? (process.env[OWNER_ENV] || undefined);
  if (given !== undefined) {
    const problem = ownerProblem(given);
    if (problem)
      throw new OwnerError(`invalid owner name "${given}" (${flag !== undefined ? "--owner" : OWNER_ENV}): ${problem}`);
    return given;
  }
  return defaultOwner(location.repo, location.subdir);
}
