// The backup artifact format (media types) and its verification before a restore touches anything.
import { type RegistryClient, RegistryError } from "./client.js";
import { formatReference, manifestRef, type OciReference } from "./reference.js";

export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
/** `artifactType` of a vc backup (OCI 1.1). */
export const BACKUP_ARTIFACT_TYPE = "application/vnd.vc.orch.io.backup.v1";
/** The config blob: JSON `BackupConfig`. */
export const BACKUP_CONFIG_TYPE = "application/vnd.vc.orch.io.backup.config.v1+json";
/** The one layer: a gzip tar of the kvstore snapshot. */
const BACKUP_LAYER_TYPE = "application/vnd.vc.orch.io.backup.snapshot.v1.tar+gzip";

const DIGEST = /^sha256:[a-f0-9]{64}$/;

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

interface BackupManifest {
  schemaVersion: 2;
  mediaType: typeof OCI_MANIFEST;
  artifactType: typeof BACKUP_ARTIFACT_TYPE;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface BackupConfig {
  /** The virtual cluster the snapshot was taken from. */
  cluster: string;
  /** RFC 3339 time of the snapshot. */
  createdAt: string;
  /** What the snapshot holds: `kvstore` (embedded store) or `database` (an external database dump). */
  store: "kvstore" | "database";
}

export class BackupError extends Error {}

export interface VerifiedBackup {
  /** The reference pinned to the manifest digest: what the restore pod is given. */
  pinned: string;
  manifestDigest: string;
  config: BackupConfig;
  snapshot: Descriptor;
}

function checkDescriptor(d: unknown, where: string): Descriptor {
  const x = d as Partial<Descriptor> | undefined;
  if (!x || typeof x.mediaType !== "string" || typeof x.digest !== "string" || typeof x.size !== "number") {
    throw new BackupError(`${where} is not a descriptor (mediaType, digest, size)`);
  }
  if (!DIGEST.test(x.digest))
    throw new BackupError(`${where} has an invalid digest "${x.digest}" (expected sha256:<64 hex>)`);
  if (!Number.isInteger(x.size) || x.size < 0) throw new BackupError(`${where} has an invalid size ${x.size}`);
  return x as Descriptor;
}

/** Checks a manifest's shape and media types; pure. */
function checkBackupManifest(manifest: unknown, mediaType: string): { config: Descriptor; snapshot: Descriptor } {
  const m = manifest as Partial<BackupManifest> & { mediaType?: string; artifactType?: string };
  const type = mediaType || m.mediaType;
  if (type !== OCI_MANIFEST)
    throw new BackupError(
      `the reference is a "${type}", not an OCI image manifest (${OCI_MANIFEST}): is it a backup artifact?`,
    );
  if (m.schemaVersion !== 2)
    throw new BackupError(`the manifest has schemaVersion ${String(m.schemaVersion)}, expected 2`);
  const config = checkDescriptor(m.config, "the manifest's config");
  if (m.artifactType !== BACKUP_ARTIFACT_TYPE && config.mediaType !== BACKUP_CONFIG_TYPE) {
    throw new BackupError(
      `the artifact type is "${m.artifactType ?? config.mediaType}", not a vc backup (${BACKUP_ARTIFACT_TYPE})`,
    );
  }
  if (config.mediaType !== BACKUP_CONFIG_TYPE)
    throw new BackupError(`the config media type is "${config.mediaType}", expected ${BACKUP_CONFIG_TYPE}`);
  const layers = Array.isArray(m.layers) ? m.layers.map((l, i) => checkDescriptor(l, `layer ${i}`)) : [];
  const wrong = layers.filter((l) => l.mediaType !== BACKUP_LAYER_TYPE);
  if (wrong.length)
    throw new BackupError(`layer media type "${wrong[0]!.mediaType}" is not a vc snapshot (${BACKUP_LAYER_TYPE})`);
  if (layers.length !== 1)
    throw new BackupError(`a backup has exactly one snapshot layer; this one has ${layers.length}`);
  return { config, snapshot: layers[0]! };
}

function parseConfig(bytes: Buffer): BackupConfig {
  let c: Partial<BackupConfig>;
  try {
    c = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new BackupError("the backup config blob is not JSON");
  }
  if (
    typeof c.cluster !== "string" ||
    typeof c.createdAt !== "string" ||
    (c.store !== "kvstore" && c.store !== "database")
  ) {
    throw new BackupError("the backup config blob lacks cluster, createdAt or store (kvstore|database)");
  }
  return c as BackupConfig;
}

/** Fetches the manifest and every blob, checking digests, sizes and media types; changes nothing anywhere. */
export async function verifyBackup(client: RegistryClient, ref: OciReference): Promise<VerifiedBackup> {
  let fetched;
  try {
    fetched = await client.getManifest(ref.repository, manifestRef(ref), [OCI_MANIFEST]);
  } catch (err) {
    if (err instanceof RegistryError && err.status === 404) {
      throw new BackupError(
        `${formatReference(ref)} not found in the registry: check the repository and ${ref.digest ? "digest" : "tag"}`,
      );
    }
    throw err;
  }
  if (ref.digest && fetched.digest !== ref.digest) {
    throw new BackupError(`the manifest's content hashes to ${fetched.digest}, not the requested ${ref.digest}`);
  }
  const announced = fetched.headers.get("docker-content-digest");
  if (announced && announced !== fetched.digest) {
    throw new BackupError(`the registry announced digest ${announced} but the manifest hashes to ${fetched.digest}`);
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(fetched.bytes.toString("utf8"));
  } catch {
    throw new BackupError("the manifest is not JSON");
  }
  const { config, snapshot } = checkBackupManifest(manifest, fetched.mediaType);
  const configBytes = await client.getBlob(ref.repository, config.digest, config.size, true);
  const parsed = parseConfig(configBytes!);
  await client.getBlob(ref.repository, snapshot.digest, snapshot.size, false);
  return {
    pinned: formatReference({ registry: ref.registry, repository: ref.repository, digest: fetched.digest }, true),
    manifestDigest: fetched.digest,
    config: parsed,
    snapshot,
  };
}

/** Builds and pushes a backup artifact (used by backup tooling and by the tests); returns the manifest digest. */
export async function pushBackup(
  client: RegistryClient,
  repository: string,
  tag: string,
  config: BackupConfig,
  snapshot: Buffer,
): Promise<string> {
  const configBytes = Buffer.from(JSON.stringify(config));
  const configDigest = await client.pushBlob(repository, configBytes);
  const layerDigest = await client.pushBlob(repository, snapshot);
  const manifest: BackupManifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    artifactType: BACKUP_ARTIFACT_TYPE,
    config: { mediaType: BACKUP_CONFIG_TYPE, digest: configDigest, size: configBytes.length },
    layers: [{ mediaType: BACKUP_LAYER_TYPE, digest: layerDigest, size: snapshot.length }],
    annotations: { "org.opencontainers.image.created": config.createdAt },
  };
  return client.pushManifest(repository, tag, Buffer.from(JSON.stringify(manifest)), OCI_MANIFEST);
}
