// The Secrets of a control plane: its effective values, and the external database endpoint when given inline.
import { createHash } from "node:crypto";
import type { KubeObject } from "../kube/object.js";
import type { Values } from "../model/values.js";
import { ANNOTATIONS } from "../translate/keys.js";
import { type RenderContext, controlPlaneMeta, names } from "./meta.js";
import { sortKeysDeep } from "./sort.js";

export const CONFIG_KEY = "values.yaml";
const DATABASE_ENDPOINT_KEY = "endpoint";

/** Where the syncer reads the external database URL: the user's Secret, or the one vc renders. */
export function databaseSecretRef(values: Values, cluster: string): { name: string; key: string } | undefined {
  const db = values.controlPlane.backingStore.database.external;
  if (!db.enabled) return undefined;
  if (db.endpointSecretRef) return { name: db.endpointSecretRef.name, key: db.endpointSecretRef.key };
  if (db.endpoint === "") return undefined;
  return { name: names.databaseSecret(cluster), key: DATABASE_ENDPOINT_KEY };
}

/**
 * The effective values as the control plane reads them: an inline database endpoint is replaced by a
 * reference to the Secret vc renders for it, so the URL lives in exactly one object.
 */
function configValues(values: Values, cluster: string): Values {
  const db = values.controlPlane.backingStore.database.external;
  if (!db.enabled || db.endpointSecretRef || db.endpoint === "") return values;
  const ref = databaseSecretRef(values, cluster)!;
  return {
    ...values,
    controlPlane: {
      ...values.controlPlane,
      backingStore: {
        ...values.controlPlane.backingStore,
        database: { external: { enabled: true, endpoint: "", endpointSecretRef: ref } },
      },
    },
  };
}

/**
 * The values file the control plane mounts: JSON with sorted keys and two-space indent (stable bytes; JSON is
 * YAML, so the file stays a values.yaml; JSON because serialising it is 10x faster than a YAML dump).
 */
export function configText(values: Values, cluster: string): string {
  return `${JSON.stringify(sortKeysDeep(configValues(values, cluster)), null, 2)}\n`;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function b64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

export function renderConfigSecret(configYaml: string, ctx: RenderContext, source: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: controlPlaneMeta(ctx, source, names.configSecret(ctx.cluster)),
    type: "Opaque",
    data: { [CONFIG_KEY]: b64(configYaml) },
  };
}

/** The Secret holding an inline external database endpoint; none when a Secret reference is given. */
export function renderDatabaseSecret(values: Values, ctx: RenderContext, source: string): KubeObject | undefined {
  const db = values.controlPlane.backingStore.database.external;
  if (!db.enabled || db.endpointSecretRef || db.endpoint === "") return undefined;
  const metadata = controlPlaneMeta(ctx, source, names.databaseSecret(ctx.cluster));
  metadata.annotations = { ...metadata.annotations, [ANNOTATIONS.inlineCredential]: "true" };
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata,
    type: "Opaque",
    data: { [DATABASE_ENDPOINT_KEY]: b64(db.endpoint) },
  };
}

/** True for a Secret rendered from a credential written inline in the repository. */
export function holdsInlineCredential(obj: KubeObject): boolean {
  return (
    obj.kind === "Secret" &&
    obj.apiVersion === "v1" &&
    obj.metadata.annotations?.[ANNOTATIONS.inlineCredential] === "true"
  );
}

/**
 * The object as outputs other than the live host show it (`vc render`, the `dir:` target): a Secret holding an
 * inline credential without its data; any other object as it is. Hydrated manifests then never carry the
 * credential: whoever applies them creates that Secret's data out of band (or uses endpointSecretRef).
 */
export function withholdCredentials(obj: KubeObject): KubeObject {
  if (!holdsInlineCredential(obj)) return obj;
  const {
    data: _data,
    stringData: _stringData,
    ...rest
  } = obj as KubeObject & { data?: unknown; stringData?: unknown };
  return rest;
}
