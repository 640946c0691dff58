// The rollout record and base snapshots in the records namespace: read, write (guarded by resourceVersion), requests of
// vc rollout.
import { createHash } from "node:crypto";
import type { KubeObject } from "../kube/object.js";
import { KubeApiError, objectPath, type KubeClient } from "../host/client.js";
import { FIELD_MANAGER, LABELS } from "../translate/keys.js";
import { PlatformNamespaceGuard } from "../records/platform-namespace.js";
import { RECORD_LABEL } from "../records/record.js";
import { recordsNamespace } from "../translate/keys.js";
import { fromSnapshotConfigMap, snapshotConfigMap, snapshotName, type BaseSnapshot } from "./snapshot.js";
import { ROLLOUT_PHASES, type RolloutRecord, type RolloutRequest } from "./types.js";

/** Field manager of the `request` key (vc rollout pause|resume|abort), apart from the reconciler's. */
export const REQUEST_FIELD_MANAGER = "vc-rollout";

/** Name of the rollout record of a source. */
export function rolloutName(source: string): string {
  return `vc-rollout-${createHash("sha256").update(source).digest("hex").slice(0, 12)}`;
}

/** The stored rollout of a source: the record, a pending request, and the resourceVersion they were read at. */
export interface StoredRollout {
  record?: RolloutRecord;
  request?: RolloutRequest;
  resourceVersion?: string;
  /** Set when the ConfigMap exists but its data is not a rollout record vc wrote. */
  damaged?: string;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** The record a rollout ConfigMap holds (pure); `damaged` says why when it holds none. */
export function fromRolloutConfigMap(cm: KubeObject, source: string): StoredRollout {
  const out: StoredRollout = {};
  if (cm.metadata.resourceVersion) out.resourceVersion = cm.metadata.resourceVersion;
  if (cm.metadata.labels?.[RECORD_LABEL] !== "rollout" || cm.metadata.name !== rolloutName(source))
    return { ...out, damaged: "not a rollout record" };
  const data = (cm.data as Record<string, string> | undefined) ?? {};
  try {
    const req = data.request ? (JSON.parse(data.request) as unknown) : undefined;
    if (isObject(req) && (req.action === "pause" || req.action === "resume" || req.action === "abort")) {
      out.request = { action: req.action, by: String(req.by ?? "unknown"), at: String(req.at ?? "") };
    }
  } catch {
    // A request that is not JSON is no request.
  }
  if (data.rollout === undefined) return out;
  try {
    const r = JSON.parse(data.rollout) as unknown;
    if (
      !isObject(r) ||
      typeof r.id !== "string" ||
      !isObject(r.to) ||
      typeof r.to.digest !== "string" ||
      !(ROLLOUT_PHASES as readonly unknown[]).includes(r.phase) ||
      !Array.isArray(r.waves) ||
      typeof r.wave !== "number" ||
      !isObject(r.moved) ||
      !isObject(r.from) ||
      r.source !== source
    ) {
      return { ...out, damaged: "the rollout data is not a record vc wrote" };
    }
    out.record = r as unknown as RolloutRecord;
    if (out.request) out.record.request = out.request;
  } catch {
    return { ...out, damaged: "the rollout data is not JSON" };
  }
  return out;
}

export class RolloutStore {
  /** The records namespace, verified a platform namespace before the first read or write. */
  private readonly guard: PlatformNamespaceGuard;

  /** `guard`: the records namespace's verification to share (a RecordStore's), else one of its own. */
  constructor(
    readonly client: KubeClient,
    readonly namespace: string = recordsNamespace(),
    guard?: PlatformNamespaceGuard,
  ) {
    this.guard = guard ?? new PlatformNamespaceGuard(client, namespace, "records");
  }

  private ref(source: string) {
    return { apiVersion: "v1", kind: "ConfigMap", namespace: this.namespace, name: rolloutName(source) };
  }

  /** The rollout of a source (one GET); empty when there is none. */
  async read(source: string): Promise<StoredRollout> {
    if (!(await this.guard.readable())) return {};
    const cm = await this.client.get(this.ref(source));
    return cm ? fromRolloutConfigMap(cm, source) : {};
  }

  /**
   * Writes the record (without the request it acted on) at `resourceVersion` (absent: creates it). A request written
   * since it was read makes this a 409 (KubeApiError): the caller reads again on its next tick.
   */
  async write(record: RolloutRecord, resourceVersion: string | undefined): Promise<string | undefined> {
    const { request: _req, ...stored } = record;
    const cm: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: rolloutName(record.source),
        namespace: this.namespace,
        labels: { [RECORD_LABEL]: "rollout", ...(record.source ? { [LABELS.owner]: record.source } : {}) },
      },
      data: { rollout: JSON.stringify(stored) },
    };
    await this.guard.ensure();
    if (resourceVersion !== undefined) {
      cm.metadata.resourceVersion = resourceVersion;
      const out = await this.client.request<KubeObject>("PUT", objectPath(cm), {
        query: { fieldManager: FIELD_MANAGER },
        body: cm,
      });
      return out.metadata.resourceVersion;
    }
    const post = () =>
      this.client.request<KubeObject>("POST", `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/configmaps`, {
        query: { fieldManager: FIELD_MANAGER },
        body: cm,
      });
    try {
      return (await post()).metadata.resourceVersion;
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
      this.guard.forget();
      await this.guard.ensure();
      return (await post()).metadata.resourceVersion;
    }
  }

  /** Writes a request of `vc rollout pause|resume|abort` (the `request` key alone, its own field manager). */
  async request(source: string, req: RolloutRequest): Promise<void> {
    const cm: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: rolloutName(source), namespace: this.namespace },
      data: { request: JSON.stringify(req) },
    };
    await this.guard.readable();
    await this.client.apply(cm, { fieldManager: REQUEST_FIELD_MANAGER });
  }

  /** A stored base snapshot (one GET), checked against its digest; undefined when absent or not matching. */
  async readSnapshot(digest: string): Promise<BaseSnapshot | undefined> {
    if (!(await this.guard.readable())) return undefined;
    const cm = await this.client.get({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: this.namespace,
      name: snapshotName(digest),
    });
    const snap = cm ? fromSnapshotConfigMap(cm) : undefined;
    return snap?.digest === digest ? snap : undefined;
  }

  /** Stores a base snapshot (server-side apply: writing the same content again changes nothing). */
  async writeSnapshot(source: string, snap: BaseSnapshot): Promise<void> {
    const cm = snapshotConfigMap(this.namespace, source, snap);
    await this.guard.ensure();
    try {
      await this.client.apply(cm);
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
      this.guard.forget();
      await this.guard.ensure();
      await this.client.apply(cm);
    }
  }
}
