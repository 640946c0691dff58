// Secret masking: Secret values never reach a diff, log or status; a changed value still shows as changed.
import type { KubeObject } from "../kube/object.js";
import { MASK, maskCredentialsDeep } from "../model/secrets.js";
import { isPlainObject } from "./normalize.js";

export { MASK };

/** Shown on the live side and the desired side of a Secret value that differs between them. */
const MASK_BEFORE = "<masked, before>";
const MASK_AFTER = "<masked, changed>";

/** Annotations that may carry a copy of a Secret's data (kubectl's client-side apply record). */
const COPY_ANNOTATIONS = ["kubectl.kubernetes.io/last-applied-configuration"];

function isSecret(obj: KubeObject | undefined): boolean {
  return !!obj && obj.apiVersion === "v1" && obj.kind === "Secret";
}

/**
 * A copy of a Secret with every value of data and stringData (and copies of them in annotations) masked. Other kinds
 * unchanged.
 */
export function maskSecret(obj: KubeObject): KubeObject {
  if (!isSecret(obj)) return obj;
  return maskFields(obj, (_field, _key, _value) => MASK);
}

/**
 * Masks a desired/live pair of Secrets so that equal values mask alike and differing values mask
 * differently (`<masked, before>` / `<masked, changed>`): the diff shows which keys changed, never a value.
 */
export function maskSecretPair(
  desired: KubeObject | undefined,
  live: KubeObject | undefined,
): [KubeObject | undefined, KubeObject | undefined] {
  if (!isSecret(desired) && !isSecret(live)) return [desired, live];
  const valueIn = (obj: KubeObject | undefined, field: string, key: string): unknown => {
    const m = obj?.[field];
    return isPlainObject(m) ? m[key] : undefined;
  };
  const maskedDesired =
    desired &&
    maskFields(desired, (field, key, value) => {
      const other = valueIn(live, field, key);
      return other === undefined || other === value ? MASK : MASK_AFTER;
    });
  const maskedLive =
    live &&
    maskFields(live, (field, key, value) => {
      const other = valueIn(desired, field, key);
      return other === undefined || other === value ? MASK : MASK_BEFORE;
    });
  return [maskedDesired, maskedLive];
}

function maskFields(obj: KubeObject, mask: (field: string, key: string, value: unknown) => string): KubeObject {
  const out: KubeObject = { ...obj, metadata: { ...obj.metadata } };
  for (const field of ["data", "stringData"]) {
    const m = obj[field];
    if (!isPlainObject(m)) continue;
    out[field] = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, mask(field, k, v)]));
  }
  const ann = obj.metadata.annotations;
  if (ann && COPY_ANNOTATIONS.some((a) => a in ann)) {
    out.metadata.annotations = Object.fromEntries(
      Object.entries(ann).map(([k, v]) => [k, COPY_ANNOTATIONS.includes(k) ? MASK : v]),
    );
  }
  return out;
}

/**
 * Removes a Secret's values from a text (an API error message may echo a value): each value of data
 * (base64 and decoded) and stringData becomes `<masked>`. Other kinds: the text as it is.
 */
export function maskSecretValuesIn(text: string, obj: KubeObject | undefined): string {
  if (!obj || !isSecret(obj)) return text;
  const values = new Set<string>();
  for (const field of ["data", "stringData"]) {
    const m = obj[field];
    if (!isPlainObject(m)) continue;
    for (const v of Object.values(m)) {
      if (typeof v !== "string" || v.length < 4) continue;
      values.add(v);
      if (field === "data") {
        const decoded = Buffer.from(v, "base64").toString("utf8");
        if (decoded.length >= 4) values.add(decoded);
      }
    }
  }
  let out = text;
  for (const v of [...values].sort((a, b) => b.length - a.length)) out = out.split(v).join(MASK);
  return out;
}

/**
 * Masks the credentials any kind may carry, on both sides of a diff, by the one rule (model/secrets.ts
 * maskCredentialsDeep): env values named like credentials (`DB_PASSWORD`, `DB_PWD`, `JWT`, ...), annotations and
 * flag arguments named like credentials, and credentials recognised by their shape in any string (URL passwords,
 * `Password=` inside a connection string, tokens, keys). Equal values mask alike, differing ones as
 * `<masked, before>` / `<masked, changed>`, so a diff shows that a credential changed and never what it is.
 */
export function maskCredentialsPair(
  desired: KubeObject | undefined,
  live: KubeObject | undefined,
): [KubeObject | undefined, KubeObject | undefined] {
  return [
    desired && (maskCredentialsDeep(desired, live, MASK_AFTER) as KubeObject),
    live && (maskCredentialsDeep(live, desired, MASK_BEFORE) as KubeObject),
  ];
}
