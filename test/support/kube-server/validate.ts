// Validation the API server applies to every write: names, namespaces, labels, kind and apiVersion.
import type { KubeObject } from "../../../src/kube/object.js";
import type { Served } from "./catalog.js";
import { ApiError, badRequest, invalid, type StatusCause } from "./status.js";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Kinds whose names must be DNS-1123 labels rather than subdomains. */
const LABEL_NAMED = new Set(["Namespace", "Service"]);
/** Kinds whose names are path segments: anything without "/" or "%" (RBAC). */
const PATH_NAMED = new Set(["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]);

function nameCauses(kind: string, name: string): StatusCause[] {
  if (PATH_NAMED.has(kind)) {
    if (name === "." || name === ".." || /[/%]/.test(name))
      return [
        {
          reason: "FieldValueInvalid",
          field: "metadata.name",
          message: `Invalid value: "${name}": may not contain '/' or '%'`,
        },
      ];
    return [];
  }
  if (LABEL_NAMED.has(kind)) {
    if (name.length > 63 || !DNS1123_LABEL.test(name)) {
      return [
        {
          reason: "FieldValueInvalid",
          field: "metadata.name",
          message:
            `Invalid value: "${name}": a lowercase RFC 1123 label must consist of lower case alphanumeric ` +
            `characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or ` +
            `'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
        },
      ];
    }
    return [];
  }
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    return [
      {
        reason: "FieldValueInvalid",
        field: "metadata.name",
        message:
          `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric ` +
          `characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', ` +
          `regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      },
    ];
  }
  return [];
}

function labelCauses(labels: unknown): StatusCause[] {
  if (labels === undefined || labels === null) return [];
  if (typeof labels !== "object" || Array.isArray(labels))
    return [
      {
        reason: "FieldValueInvalid",
        field: "metadata.labels",
        message: "Invalid value: labels must be a map of strings",
      },
    ];
  const causes: StatusCause[] = [];
  for (const [k, v] of Object.entries(labels)) {
    const slash = k.indexOf("/");
    const name = slash < 0 ? k : k.slice(slash + 1);
    const prefix = slash < 0 ? undefined : k.slice(0, slash);
    if (
      name.length > 63 ||
      !LABEL_NAME.test(name) ||
      (prefix !== undefined && (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)))
    ) {
      causes.push({
        reason: "FieldValueInvalid",
        field: "metadata.labels",
        message:
          `Invalid value: "${k}": name part must consist of alphanumeric characters, '-', '_' or '.', and ` +
          `must start and end with an alphanumeric character`,
      });
    }
    if (typeof v !== "string" || v.length > 63 || !LABEL_VALUE.test(v)) {
      causes.push({
        reason: "FieldValueInvalid",
        field: `metadata.labels`,
        message:
          `Invalid value: ${JSON.stringify(v)}: a valid label must be an empty string or consist of ` +
          `alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      });
    }
  }
  return causes;
}

/** Most bytes of a ConfigMap's data and binaryData values together (the API server's limit; keys are not counted). */
const CONFIGMAP_MAX_BYTES = 1024 * 1024;

/** A ConfigMap whose values exceed 1 MiB is refused as the API server refuses it (422 on `[]`). */
export function checkDataSize(obj: KubeObject, served: Served): void {
  if (served.kind !== "ConfigMap" || served.group !== "") return;
  let total = 0;
  for (const v of Object.values((obj.data as Record<string, unknown> | undefined) ?? {}))
    total += typeof v === "string" ? Buffer.byteLength(v, "utf8") : 0;
  // binaryData travels as base64: its decoded length counts.
  for (const v of Object.values((obj.binaryData as Record<string, unknown> | undefined) ?? {}))
    total += typeof v === "string" ? Buffer.from(v, "base64").length : 0;
  if (total > CONFIGMAP_MAX_BYTES) {
    throw invalid(served.kind, served.group, obj.metadata.name, [
      { reason: "FieldValueTooLong", field: "[]", message: `Too long: must have at most ${CONFIGMAP_MAX_BYTES} bytes` },
    ]);
  }
}

/** Checks the body's shape against the URL (400) and the object's fields (422). */
export function validateObject(
  obj: unknown,
  served: Served,
  urlNamespace: string | undefined,
  urlName?: string,
): asserts obj is KubeObject {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj))
    throw badRequest("the body of the request was not a JSON or YAML object");
  const o = obj as Partial<KubeObject>;
  if (o.kind !== undefined && o.kind !== served.kind)
    throw badRequest(
      `the kind of the object (${String(o.kind)}) does not match the kind of the request (${served.kind})`,
    );
  if (o.apiVersion !== undefined && o.apiVersion !== served.apiVersion)
    throw badRequest(
      `the API version in the data (${String(o.apiVersion)}) does not match the expected API version ` +
        `(${served.apiVersion})`,
    );
  if (typeof o.metadata !== "object" || o.metadata === null || Array.isArray(o.metadata)) {
    throw invalid(served.kind, served.group, "", [
      {
        reason: "FieldValueRequired",
        field: "metadata.name",
        message: "Required value: name or generateName is required",
      },
    ]);
  }
  const meta = o.metadata;
  if (
    served.namespaced &&
    meta.namespace !== undefined &&
    urlNamespace !== undefined &&
    meta.namespace !== urlNamespace
  ) {
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  if (urlName !== undefined && meta.name !== undefined && meta.name !== urlName) {
    throw badRequest("the name of the object does not match the name on the URL");
  }
  const name = typeof meta.name === "string" ? meta.name : "";
  if (name === "")
    throw invalid(served.kind, served.group, "", [
      {
        reason: "FieldValueRequired",
        field: "metadata.name",
        message: "Required value: name or generateName is required",
      },
    ]);
  const causes = [...nameCauses(served.kind, name), ...labelCauses(meta.labels)];
  if (causes.length > 0) throw invalid(served.kind, served.group, name, causes);
  if (
    meta.annotations !== undefined &&
    (typeof meta.annotations !== "object" ||
      meta.annotations === null ||
      Object.values(meta.annotations).some((v) => typeof v !== "string"))
  ) {
    throw invalid(served.kind, served.group, name, [
      {
        reason: "FieldValueInvalid",
        field: "metadata.annotations",
        message: "Invalid value: annotations must be a map of strings",
      },
    ]);
  }
  checkDataSize(o as KubeObject, served);
}

export function methodNotAllowed(served: Served, verb: string): ApiError {
  return new ApiError(
    405,
    `the server does not allow this method on the requested resource (${verb} ${served.plural}.${served.group})`,
    "MethodNotAllowed",
  );
}
