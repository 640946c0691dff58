// OpenAPI documents, as much as kubectl needs: v3 PATCH operations advertising fieldValidation (so kubectl validates
// server-side instead of downloading schemas) and a minimal protobuf v2 document (no schemas: kubectl falls back to
// its built-in types for strategic merge patches and to JSON merge patches for the mesh kinds).
import { createHash } from "node:crypto";
import { groupVersions, resourcesIn, type Served } from "./catalog.js";

export interface Document {
  contentType: string;
  body: string | Buffer;
}

const QUERY_PARAMS = ["dryRun", "fieldManager", "fieldValidation", "force", "pretty"];

function gvPath(group: string, version: string): string {
  return group === "" ? `api/${version}` : `apis/${group}/${version}`;
}

function patchOperation(r: Served): Record<string, unknown> {
  return {
    operationId: `patch${r.namespaced ? "Namespaced" : ""}${r.kind}`,
    parameters: QUERY_PARAMS.map((name) => ({
      name,
      in: "query",
      schema: { type: name === "force" ? "boolean" : "string", uniqueItems: true },
    })),
    responses: { "200": { description: "OK" }, "201": { description: "Created" } },
    "x-kubernetes-action": "patch",
    "x-kubernetes-group-version-kind": { group: r.group, version: r.version, kind: r.kind },
  };
}

function getOperation(r: Served): Record<string, unknown> {
  return {
    operationId: `read${r.namespaced ? "Namespaced" : ""}${r.kind}`,
    responses: { "200": { description: "OK" } },
    "x-kubernetes-action": "get",
    "x-kubernetes-group-version-kind": { group: r.group, version: r.version, kind: r.kind },
  };
}

function groupVersionDoc(group: string, version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const r of resourcesIn(group, version)) {
    if (r.createOnly) continue;
    const base = `/${gvPath(group, version)}${r.namespaced ? "/namespaces/{namespace}" : ""}/${r.plural}/{name}`;
    paths[base] = r.readOnly ? { get: getOperation(r) } : { get: getOperation(r), patch: patchOperation(r) };
  }
  return { openapi: "3.0.0", info: { title: "Kubernetes", version: "v1.32.0" }, paths, components: { schemas: {} } };
}

/** protobuf varint. */
function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 127) {
    bytes.push((n & 127) | 128);
    n >>>= 7;
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

function field(num: number, payload: Buffer): Buffer {
  return Buffer.concat([varint((num << 3) | 2), varint(payload.length), payload]);
}

/** gnostic openapi_v2.Document { swagger: "2.0", info: { title, version } }. */
function openApiV2Protobuf(): Buffer {
  const info = Buffer.concat([field(1, Buffer.from("Kubernetes")), field(2, Buffer.from("v1.32.0"))]);
  return Buffer.concat([field(1, Buffer.from("2.0")), field(2, info)]);
}

export class OpenApi {
  private readonly docs = new Map<string, string>();

  constructor() {
    for (const [group, versions] of groupVersions()) {
      for (const v of versions) this.docs.set(gvPath(group, v), JSON.stringify(groupVersionDoc(group, v)));
    }
  }

  /** The document at an /openapi path, or undefined (404). */
  serve(path: string): Document | undefined {
    if (path === "/openapi/v2")
      return { contentType: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", body: openApiV2Protobuf() };
    if (path === "/openapi/v3") {
      const paths: Record<string, unknown> = {};
      for (const [key, doc] of this.docs) {
        const hash = createHash("sha256").update(doc).digest("hex").slice(0, 32).toUpperCase();
        paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
      }
      return { contentType: "application/json", body: JSON.stringify({ paths }) };
    }
    if (path.startsWith("/openapi/v3/")) {
      const doc = this.docs.get(path.slice("/openapi/v3/".length));
      if (doc) return { contentType: "application/json", body: doc };
    }
    return undefined;
  }
}
