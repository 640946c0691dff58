// Decodes the protobuf bodies typed kubectl commands send (`kubectl create namespace|configmap|secret|serviceaccount`)
// (and `kubectl auth can-i|whoami`) for the few simple kinds whose schema fits here: ObjectMeta plus string/bytes maps,
// and SelfSubjectAccessReview. Other kinds stay 415.
import type { KubeObject } from "../../../src/kube/object.js";
import { ApiError } from "./status.js";

type Field = { num: number; wire: number; value: number | Buffer };

function readVarint(buf: Buffer, pos: number): [number, number] {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error("truncated varint");
    const b = buf[pos++]!;
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7;
    if (shift > 63) throw new Error("varint too long");
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, p1] = readVarint(buf, pos);
    const num = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) {
      const [v, p2] = readVarint(buf, p1);
      out.push({ num, wire, value: v });
      pos = p2;
    } else if (wire === 2) {
      const [len, p2] = readVarint(buf, p1);
      if (p2 + len > buf.length) throw new Error("truncated field");
      out.push({ num, wire, value: buf.subarray(p2, p2 + len) });
      pos = p2 + len;
    } else if (wire === 1) {
      pos = p1 + 8;
    } else if (wire === 5) {
      pos = p1 + 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const str = (f: Field) => (f.value as Buffer).toString("utf8");

function mapEntry(f: Field, bytes: boolean): [string, string] {
  let k = "";
  let v = "";
  for (const e of fields(f.value as Buffer)) {
    if (e.num === 1) k = str(e);
    if (e.num === 2) v = bytes ? (e.value as Buffer).toString("base64") : str(e);
  }
  return [k, v];
}

function objectMeta(buf: Buffer): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  for (const f of fields(buf)) {
    if (f.num === 1) meta.name = str(f);
    else if (f.num === 2) meta.generateName = str(f);
    else if (f.num === 3) meta.namespace = str(f);
    else if (f.num === 11)
      ((meta.labels ??= {}) as Record<string, string>)[mapEntry(f, false)[0]] = mapEntry(f, false)[1];
    else if (f.num === 12)
      ((meta.annotations ??= {}) as Record<string, string>)[mapEntry(f, false)[0]] = mapEntry(f, false)[1];
  }
  return meta;
}

/** Field numbers of the string and bytes maps per kind (see k8s.io/api/core/v1/generated.proto). */
const KINDS: Record<
  string,
  { strings?: Record<number, string>; bytes?: Record<number, string>; scalars?: Record<number, string> }
> = {
  Namespace: {},
  ServiceAccount: {},
  ConfigMap: { strings: { 2: "data" }, bytes: { 3: "binaryData" } },
  Secret: { bytes: { 2: "data" }, strings: { 4: "stringData" }, scalars: { 3: "type" } },
};

const RESOURCE_ATTRIBUTES = ["", "namespace", "verb", "group", "version", "resource", "subresource", "name"];

/**
 * authorization.k8s.io/v1 SelfSubjectAccessReview: spec (2) holds resourceAttributes (1) or nonResourceAttributes (2).
 */
function accessReview(raw: Buffer): KubeObject {
  const spec: Record<string, Record<string, string>> = {};
  for (const f of fields(raw)) {
    if (f.num !== 2) continue;
    for (const part of fields(f.value as Buffer)) {
      const attrs: Record<string, string> = {};
      for (const a of fields(part.value as Buffer)) {
        const key = part.num === 1 ? RESOURCE_ATTRIBUTES[a.num] : ["", "path", "verb"][a.num];
        if (key && a.wire === 2) attrs[key] = str(a);
      }
      if (part.num === 1) spec.resourceAttributes = attrs;
      if (part.num === 2) spec.nonResourceAttributes = attrs;
    }
  }
  return { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", metadata: { name: "" }, spec };
}

/** The JSON form of a `k8s\0` protobuf envelope, or a 415 for kinds the server cannot decode. */
export function decodeProtobuf(body: Buffer): KubeObject {
  const unsupported = (why: string) =>
    new ApiError(
      415,
      `the test server decodes protobuf bodies only for Namespace, ConfigMap, Secret and ServiceAccount (${why}): ` +
        `send JSON, e.g. kubectl create -f or kubectl apply`,
      "UnsupportedMediaType",
    );
  if (body.length < 4 || body.subarray(0, 4).toString("latin1") !== "k8s\u0000")
    throw unsupported("no k8s protobuf envelope");
  try {
    let apiVersion = "";
    let kind = "";
    let raw: Buffer = Buffer.alloc(0);
    for (const f of fields(body.subarray(4))) {
      if (f.num === 1)
        for (const t of fields(f.value as Buffer))
          t.num === 1 ? (apiVersion = str(t)) : t.num === 2 ? (kind = str(t)) : undefined;
      if (f.num === 2) raw = f.value as Buffer;
    }
    if (apiVersion === "authorization.k8s.io/v1" && kind === "SelfSubjectAccessReview") return accessReview(raw);
    if (apiVersion === "authentication.k8s.io/v1" && kind === "SelfSubjectReview")
      return { apiVersion, kind, metadata: { name: "" } };
    const shape = KINDS[kind];
    if (apiVersion !== "v1" || !shape) throw unsupported(`got ${apiVersion} ${kind}`);
    const obj: KubeObject = { apiVersion, kind, metadata: { name: "" } };
    for (const f of fields(raw)) {
      if (f.num === 1) obj.metadata = objectMeta(f.value as Buffer) as KubeObject["metadata"];
      else if (shape.strings?.[f.num])
        ((obj[shape.strings[f.num]!] ??= {}) as Record<string, string>)[mapEntry(f, false)[0]] = mapEntry(f, false)[1];
      else if (shape.bytes?.[f.num])
        ((obj[shape.bytes[f.num]!] ??= {}) as Record<string, string>)[mapEntry(f, true)[0]] = mapEntry(f, true)[1];
      else if (shape.scalars?.[f.num]) obj[shape.scalars[f.num]!] = str(f);
    }
    return obj;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(
      400,
      `the body of the request could not be decoded as protobuf: ${(err as Error).message}`,
      "BadRequest",
    );
  }
}
