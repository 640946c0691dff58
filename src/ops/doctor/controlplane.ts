// Doctor checks of the control plane's state and settings: persistence of the embedded store, its volume claims,
// liveness probe.
import { finding } from "./coverage.js";
import { eventsAbout } from "../../health/pod-causes.js";
import { configOf, controlPlanePod, statefulSetSpec, syncerContainer } from "./facts.js";
import type { Check, Finding } from "./types.js";

/** Suggested liveness probe values (spec section 8). */
const SUGGESTED_LIVENESS = { initialDelaySeconds: 60, periodSeconds: 20, failureThreshold: 5 } as const;

/**
 * The embedded kvstore without a persistent volume: a note (the default), a warning once the control plane's pod was
 * recreated.
 */
export const persistence: Check = (s) => {
  let needs: boolean | undefined;
  let has: boolean | undefined;
  const values = configOf(s);
  if (s.statefulSet) {
    needs = (syncerContainer(s)?.args ?? []).includes("--backing-store=embedded-kvstore");
    has = (statefulSetSpec(s)?.volumeClaimTemplates ?? []).length > 0;
  } else if (values) {
    const bs = values.controlPlane.backingStore;
    needs = !bs.database.external.enabled && bs.kvstore.embedded.enabled;
    has = bs.kvstore.persistence.enabled;
  }
  if (!needs || has) return [];
  const how = "controlPlane.backingStore.kvstore.persistence.enabled: true, suggested size 10Gi";
  const object = `StatefulSet ${s.namespace}/${s.cluster}`;
  // The store lives in an emptyDir: it outlasts a restart of the container and is lost only with the pod.
  const recreated = podRecreated(s);
  if (recreated) {
    const message =
      `the embedded kvstore has no persistent volume and the control plane's pod was recreated ` +
      `(${recreated}): it began with an empty store, so the virtual cluster's state was reset`;
    return [finding("state-loss", { check: "persistence", severity: "warning", object, message }, how)];
  }
  const restarts = controlPlanePod(s)?.status?.containerStatuses?.find((c) => c.name === "syncer")?.restartCount ?? 0;
  const kept =
    restarts > 0
      ? `; its container restarted ${restarts} time(s), which keeps the store (an emptyDir outlasts a container ` +
        `restart)`
      : "";
  const message =
    `the embedded kvstore has no persistent volume (the default): recreating the control plane's pod ` +
    `loses the virtual cluster's state${kept}`;
  return [finding("state-loss", { check: "persistence", severity: "note", object, message }, how)];
};

/** A pod created well after its StatefulSet was recreated; a StatefulSet creates its first pod within seconds. */
const RECREATED_AFTER_MS = 120_000;

/**
 * Why the control plane's pod is known to have been recreated (created long after its StatefulSet, or created twice),
 * or undefined.
 */
function podRecreated(s: Parameters<typeof controlPlanePod>[0]): string | undefined {
  const pod = controlPlanePod(s);
  if (!pod || !s.statefulSet) return undefined;
  if (eventsAbout(s, "StatefulSet", s.statefulSet.metadata.name).some((e) => e.reason === "FailedCreate"))
    return undefined; // created late, not again
  const creates = eventsAbout(s, "StatefulSet", s.statefulSet.metadata.name).filter(
    (e) => e.reason === "SuccessfulCreate" && e.message.includes(` ${pod.metadata.name} `),
  );
  if (creates.length > 1) return `the StatefulSet created ${pod.metadata.name} ${creates.length} times`;
  const born = Date.parse(String((pod.metadata as { creationTimestamp?: unknown }).creationTimestamp ?? ""));
  const setBorn = Date.parse(
    String((s.statefulSet.metadata as { creationTimestamp?: unknown }).creationTimestamp ?? ""),
  );
  if (Number.isFinite(born) && Number.isFinite(setBorn) && born - setBorn > RECREATED_AFTER_MS) {
    return `${pod.metadata.name} was created ${Math.round((born - setBorn) / 60_000)} min after its StatefulSet`;
  }
  return undefined;
}

/** The control plane's volume claims (`<template>-<name>-<ordinal>`) that are Lost or not bound. */
export const volumeClaims: Check = (s) => {
  const spec = statefulSetSpec(s);
  if (!s.statefulSet || !spec?.volumeClaimTemplates?.length) return [];
  const out: Finding[] = [];
  for (let i = 0; i < (spec.replicas ?? 1); i++) {
    for (const tpl of spec.volumeClaimTemplates) {
      const name = `${tpl.metadata?.name ?? "data"}-${s.statefulSet.metadata.name}-${i}`;
      const pvc = s.pvcs.find((p) => p.metadata.name === name) as
        | { spec?: { storageClassName?: string }; status?: { phase?: string } }
        | undefined;
      const phase = pvc?.status?.phase;
      if (!pvc || phase === "Bound") continue;
      const storageClass = pvc.spec?.storageClassName ?? tpl.spec?.storageClassName;
      const message =
        phase === "Lost"
          ? `the control plane's volume claim ${name} is Lost: its volume is gone and the store with it`
          : `the control plane's volume claim ${name} is ` +
            `${phase ?? "not bound"}${storageClass ? ` (storage class ${storageClass})` : " (the default storage class)"}`;
      const how =
        phase === "Lost"
          ? `restore from backup (vc restore ${s.cluster} <oci_reference>)`
          : `kubectl -n ${s.namespace} describe pvc ${name}; kubectl get storageclass`;
      out.push(
        finding(
          "state-loss",
          { check: "volume-claim", severity: "error", object: `PersistentVolumeClaim ${s.namespace}/${name}`, message },
          how,
        ),
      );
    }
  }
  return out;
};

/**
 * Liveness probe values that differ from the suggested ones: a note (the spec suggests them, it does not require them).
 */
export const livenessProbe: Check = (s) => {
  const probe = syncerContainer(s)?.livenessProbe ?? configOf(s)?.controlPlane.statefulSet.probes.livenessProbe;
  if (!probe) return [];
  const keys = Object.keys(SUGGESTED_LIVENESS) as Array<keyof typeof SUGGESTED_LIVENESS>;
  const differing = keys.filter((k) => typeof probe[k] === "number" && probe[k] !== SUGGESTED_LIVENESS[k]);
  if (differing.length === 0) return [];
  const tighter = differing.some((k) => probe[k]! < SUGGESTED_LIVENESS[k]);
  const message =
    `liveness probe differs from the suggested values: ` +
    `${differing.map((k) => `${k} ${probe[k]} (suggested ${SUGGESTED_LIVENESS[k]})`).join(", ")}${tighter ? "; a tighter probe restarts a slow control plane" : ""}`;
  return [
    finding(
      "crash-liveness",
      { check: "liveness-probe", severity: "note", object: `StatefulSet ${s.namespace}/${s.cluster}`, message },
      "set controlPlane.statefulSet.probes.livenessProbe",
    ),
  ];
};
