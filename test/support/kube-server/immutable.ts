// Fields the real API server refuses to change on update, with its 422 wording.
import type { KubeObject } from "../../../src/kube/object.js";
import type { Served } from "./catalog.js";
import { ApiError } from "./status.js";
import { deepEqual } from "./fieldpath.js";
import { FACTS, type Profile } from "./profile.js";

/** 'a', 'b' and 'c' / 'a', 'b', ... and 'g', as the API server lists the updatable StatefulSet fields. */
function listed(fields: string[]): string {
  const q = fields.map((f) => `'${f}'`);
  return q.length < 3
    ? q.join(" and ")
    : fields.length === 3
      ? `${q.slice(0, -1).join(", ")}, and ${q.at(-1)}`
      : `${q.slice(0, -1).join(", ")} and ${q.at(-1)}`;
}

function invalid(
  served: Served,
  name: string,
  field: string,
  message: string,
  reason = "FieldValueForbidden",
): ApiError {
  const kind = served.group ? `${served.kind}.${served.group}` : served.kind;
  return new ApiError(422, `${kind} "${name}" is invalid: ${field}: ${message}`, "Invalid", {
    name,
    ...(served.group ? { group: served.group } : {}),
    kind: served.kind,
    causes: [{ reason, message, field }],
  });
}

/** Throws the API server's 422 when `next` changes a field of `live` that cannot be changed in place. */
export function checkImmutable(served: Served, next: KubeObject, live: KubeObject, profile: Profile = "current"): void {
  const updatable = FACTS[profile].statefulSetUpdatable;
  const spec = (next.spec ?? {}) as Record<string, unknown>;
  const liveSpec = (live.spec ?? {}) as Record<string, unknown>;
  const name = next.metadata.name;
  if (served.kind === "StatefulSet" && served.group === "apps") {
    const keys = new Set([...Object.keys(spec), ...Object.keys(liveSpec)]);
    for (const key of keys) {
      if (!updatable.includes(key) && !deepEqual(spec[key], liveSpec[key])) {
        throw invalid(
          served,
          name,
          "spec",
          `Forbidden: updates to statefulset spec for fields other than ${listed(updatable)} are forbidden`,
        );
      }
    }
  }
  if (served.kind === "Deployment" && served.group === "apps" && !deepEqual(spec.selector, liveSpec.selector)) {
    throw invalid(
      served,
      name,
      "spec.selector",
      `Invalid value: ${JSON.stringify(spec.selector)}: field is immutable`,
      "FieldValueInvalid",
    );
  }
  if (served.kind === "Service" && served.group === "") {
    const ips = (s: Record<string, unknown>) =>
      Array.isArray(s.clusterIPs)
        ? (s.clusterIPs as string[])
        : s.clusterIP !== undefined
          ? [s.clusterIP as string]
          : [];
    const [was, now] = [ips(liveSpec), ips(spec)];
    if (was.length > 0 && was[0] !== "None" && now[0] !== was[0]) {
      throw invalid(
        served,
        name,
        "spec.clusterIPs[0]",
        `Invalid value: ` +
          `${profile === "1.20" ? `[]string{${now.map((ip) => JSON.stringify(ip)).join(", ")}}` : JSON.stringify(now)}: may not change once set`,
        "FieldValueInvalid",
      );
    }
  }
  if (
    (served.kind === "Secret" || served.kind === "ConfigMap") &&
    served.group === "" &&
    (live as { immutable?: boolean }).immutable === true
  ) {
    for (const field of ["data", "stringData", "binaryData"] as const) {
      if (!deepEqual((next as Record<string, unknown>)[field], (live as Record<string, unknown>)[field])) {
        throw invalid(served, name, field, "Forbidden: field is immutable when `immutable` is set");
      }
    }
  }
}
