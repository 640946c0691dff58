// Recreates an object the API server will not update in place: orphan-delete, wait until gone, apply anew, expand
// growing claims.
import { describeRef, refOf, type KubeObject } from "../../kube/object.js";
import { resourceFor } from "../../kube/resources.js";
import { isPlainObject, stripServerFields } from "../../plan/normalize.js";
import { compareQuantities, compareQuantity, parseQuantity } from "../../kube/quantity.js";
import { sleep } from "../../util/retry.js";
import { KubeApiError, type KubeClient } from "../../host/client.js";

export interface RecreateWait {
  /** How long to wait for the old object to be gone (the garbage collector removes the orphan finalizer). */
  timeoutMs: number;
  pollMs: number;
}

export const DEFAULT_RECREATE_WAIT: RecreateWait = { timeoutMs: 120_000, pollMs: 250 };

/**
 * Workloads whose pods (and, for a StatefulSet, volume claims) must outlive the object: deleted with
 * propagationPolicy=Orphan.
 */
function orphans(obj: KubeObject): boolean {
  return obj.apiVersion === "apps/v1" && (obj.kind === "StatefulSet" || obj.kind === "Deployment");
}

/**
 * Deletes `live` (uid precondition), waits until it is gone, applies `desired`; returns notes (claims expanded or why
 * not).
 */
export async function recreateObject(
  client: KubeClient,
  live: KubeObject,
  desired: KubeObject,
  opts: { dryRun: boolean },
  wait: RecreateWait = DEFAULT_RECREATE_WAIT,
): Promise<string[]> {
  const ref = refOf(live);
  const orphan = orphans(live);
  const how = orphan
    ? "deleted with propagationPolicy=Orphan (its pods and volume claims stay) and created anew"
    : "deleted and created anew";
  if (opts.dryRun) {
    await client.delete(ref, {
      dryRun: true,
      preconditions: live.metadata.uid ? { uid: live.metadata.uid } : undefined,
      propagationPolicy: orphan ? "Orphan" : "Background",
    });
    return [`would be ${how}`, ...(live.kind === "StatefulSet" ? await expandClaims(client, live, desired, true) : [])];
  }
  await client.delete(ref, {
    preconditions: live.metadata.uid ? { uid: live.metadata.uid } : undefined,
    propagationPolicy: orphan ? "Orphan" : "Background",
  });
  await waitGone(client, live, wait);
  await client.apply(stripServerFields(desired));
  return [how, ...(live.kind === "StatefulSet" ? await expandClaims(client, live, desired, false) : [])];
}

async function waitGone(client: KubeClient, live: KubeObject, wait: RecreateWait): Promise<void> {
  const deadline = Date.now() + wait.timeoutMs;
  for (;;) {
    const now = await client.get(refOf(live));
    if (!now || now.metadata.uid !== live.metadata.uid) return;
    if (Date.now() >= deadline) {
      const finalizers = (now.metadata.finalizers as string[] | undefined) ?? [];
      throw new Error(
        `${describeRef(refOf(live))} is still being deleted after ` +
          `${Math.round(wait.timeoutMs / 1000)}s${finalizers.length ? ` (finalizers: ${finalizers.join(", ")}: the host's garbage collector removes them)` : ""}; ` +
          "run vc apply --force again once it is gone",
      );
    }
    await sleep(wait.pollMs);
  }
}

interface ClaimTemplate {
  metadata?: { name?: string };
  spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
}

const PVC = resourceFor("v1", "PersistentVolumeClaim")!;

/**
 * The claims a StatefulSet made from a template whose storage request grows (`<template>-<statefulset>-<ordinal>`):
 * each is patched to the new size when its storage class allows volume expansion; otherwise a note says why not.
 */
async function expandClaims(
  client: KubeClient,
  live: KubeObject,
  desired: KubeObject,
  dryRun: boolean,
): Promise<string[]> {
  const templates = (obj: KubeObject): ClaimTemplate[] =>
    (
      ((obj.spec as { volumeClaimTemplates?: ClaimTemplate[] } | undefined)?.volumeClaimTemplates ??
        []) as ClaimTemplate[]
    ).filter((t): t is ClaimTemplate => isPlainObject(t));
  const before = new Map(templates(live).map((t) => [t.metadata?.name, t]));
  const growing = templates(desired).filter((t) => {
    const order = compareQuantities(
      String(t.spec?.resources?.requests?.storage ?? ""),
      String(before.get(t.metadata?.name)?.spec?.resources?.requests?.storage ?? ""),
    );
    return order !== undefined && order > 0;
  });
  if (growing.length === 0) return [];
  const namespace = live.metadata.namespace!;
  const claims = await client.list(PVC, { namespace });
  const notes: string[] = [];
  const classes = new Map<string, KubeObject | undefined>();
  for (const t of growing) {
    const size = t.spec!.resources!.requests!.storage!;
    const pattern = new RegExp(`^${escapeText(t.metadata!.name!)}-${escapeText(live.metadata.name)}-\\d+$`);
    const mine = claims
      .filter((c) => pattern.test(c.metadata.name))
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    for (const claim of mine) {
      const spec = (claim.spec ?? {}) as NonNullable<ClaimTemplate["spec"]>;
      const current = spec.resources?.requests?.storage ?? "";
      const zero = parseQuantity("0")!;
      if (compareQuantity(parseQuantity(current) ?? zero, parseQuantity(size) ?? zero) >= 0) continue;
      if ((claim.status as { phase?: string } | undefined)?.phase !== "Bound") {
        notes.push(
          `claim ${claim.metadata.name} stays ${current}: it is not bound to a volume yet, and only a bound claim ` +
            `can be expanded`,
        );
        continue;
      }
      const className = spec.storageClassName;
      if (!className) {
        notes.push(`claim ${claim.metadata.name} stays ${current}: it has no storage class, so it cannot be expanded`);
        continue;
      }
      if (!classes.has(className)) classes.set(className, await getStorageClass(client, className));
      const sc = classes.get(className);
      if (!sc) {
        notes.push(
          `claim ${claim.metadata.name} stays ${current}: its storage class ${className} does not exist on the host`,
        );
        continue;
      }
      if (sc.allowVolumeExpansion !== true) {
        notes.push(
          `claim ${claim.metadata.name} stays ${current}: storage class ${className} does not allow volume ` +
            `expansion (allowVolumeExpansion is not true); ` +
            "new replicas get " +
            size +
            ", existing claims keep their size until their data is moved to a new claim",
        );
        continue;
      }
      try {
        await client.request(
          "PATCH",
          `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(claim.metadata.name)}`,
          {
            body: { spec: { resources: { requests: { storage: size } } } },
            contentType: "application/merge-patch+json",
            query: { dryRun: dryRun ? "All" : undefined },
          },
        );
      } catch (err) {
        if (!(err instanceof KubeApiError)) throw err;
        notes.push(
          `claim ${claim.metadata.name} stays ${current}: the server refused the expansion: ` +
            `${err.message.split("\n")[0]}`,
        );
        continue;
      }
      notes.push(
        `claim ${claim.metadata.name} ${dryRun ? "would be expanded" : "expanded"} from ${current} to ${size}`,
      );
    }
  }
  return notes;
}

async function getStorageClass(client: KubeClient, name: string): Promise<KubeObject | undefined> {
  try {
    return await client.request<KubeObject>(
      "GET",
      `/apis/storage.k8s.io/v1/storageclasses/${encodeURIComponent(name)}`,
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return undefined;
    throw err;
  }
}

function escapeText(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
