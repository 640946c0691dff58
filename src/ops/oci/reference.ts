// OCI artifact references: `oci://registry/repo:tag`, `registry/repo@sha256:...`, plain or with the scheme.

export interface OciReference {
  /** `host[:port]`. */
  registry: string;
  /** Repository path, e.g. `backups/team-a`. */
  repository: string;
  tag?: string;
  digest?: string;
}

export class OciReferenceError extends Error {}

const DIGEST = /^sha256:[a-f0-9]{64}$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const REPO = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

/** Parses a reference; the registry part is required (there is no implicit default registry for backups). */
export function parseReference(text: string): OciReference {
  const input = text.trim().replace(/^oci:\/\//, "");
  const slash = input.indexOf("/");
  if (slash <= 0)
    throw new OciReferenceError(
      `invalid OCI reference "${text}": expected [oci://]registry/repository[:tag|@sha256:digest]`,
    );
  const registry = input.slice(0, slash);
  if (!/^[a-zA-Z0-9.-]+(:\d+)?$/.test(registry) && !/^\[[0-9a-fA-F:]+\](:\d+)?$/.test(registry)) {
    throw new OciReferenceError(`invalid registry "${registry}" in OCI reference "${text}"`);
  }
  let rest = input.slice(slash + 1);
  let digest: string | undefined;
  let tag: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest))
      throw new OciReferenceError(`invalid digest "${digest}" in OCI reference "${text}": expected sha256:<64 hex>`);
  }
  const colon = rest.lastIndexOf(":");
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw new OciReferenceError(`invalid tag "${tag}" in OCI reference "${text}"`);
  }
  if (!REPO.test(rest)) throw new OciReferenceError(`invalid repository "${rest}" in OCI reference "${text}"`);
  if (!tag && !digest) throw new OciReferenceError(`OCI reference "${text}" names neither a tag nor a digest`);
  return { registry, repository: rest, tag, digest };
}

/** The reference as text; `pinned` writes the digest instead of the tag. */
export function formatReference(ref: OciReference, pinned = false): string {
  const base = `${ref.registry}/${ref.repository}`;
  if (pinned && ref.digest) return `${base}@${ref.digest}`;
  return `${base}${ref.tag ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}

/** The manifest reference to ask the registry for: the digest when given, else the tag. */
export function manifestRef(ref: OciReference): string {
  return ref.digest ?? ref.tag!;
}
