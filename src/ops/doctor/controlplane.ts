// Doctor checks of the control plane's configuration: persistence of the embedded store, liveness probe values.
import type { Check, Finding, HostSnapshot } from "./types.js";

/** Suggested liveness probe values (spec section 8). */
export const SUGGESTED_LIVENESS = { initialDelaySeconds: 60, periodSeconds: 20, failureThreshold: 5 } as const;

interface Container {
  name: string;
  args?: string[];
  livenessProbe?: Partial<Record<keyof typeof SUGGESTED_LIVENESS, number>>;
}

function syncer(s: HostSnapshot): Container | undefined {
  const spec = (s.statefulSet as { spec?: { template?: { spec?: { containers?: Container[] } } } } | undefined)?.spec;
  return spec?.template?.spec?.containers?.find((c) => c.name === "syncer");
}

export const persistence: Check = (s) => {
  let needs: boolean | undefined;
  let has: boolean | undefined;
  if (s.statefulSet) {
    const args = syncer(s)?.args ?? [];
    needs = args.includes("--backing-store=embedded-kvstore");
    has = ((s.statefulSet as { spec?: { volumeClaimTemplates?: unknown[] } }).spec?.volumeClaimTemplates ?? []).length > 0;
  } else if (s.values) {
    const bs = s.values.controlPlane.backingStore;
    needs = !bs.database.external.enabled && bs.kvstore.embedded.enabled;
    has = bs.kvstore.persistence.enabled;
  }
  if (!needs || has) return [];
  return [
    {
      check: "persistence",
      severity: "error",
      object: `StatefulSet ${s.namespace}/${s.cluster}`,
      message: "the embedded kvstore has no persistent volume: a restart of the control plane loses the virtual cluster's state",
      resolution: "check volume claims and storage class, enable persistence (controlPlane.backingStore.kvstore.persistence.enabled: true, suggested size 10Gi), restore from backup",
    },
  ];
};

export const livenessProbe: Check = (s) => {
  const probe = syncer(s)?.livenessProbe ?? s.values?.controlPlane.statefulSet.probes.livenessProbe;
  if (!probe) return [];
  const tight = (Object.keys(SUGGESTED_LIVENESS) as Array<keyof typeof SUGGESTED_LIVENESS>).filter((k) => typeof probe[k] === "number" && probe[k]! < SUGGESTED_LIVENESS[k]);
  if (tight.length === 0) return [];
  const found: Finding = {
    check: "liveness-probe",
    severity: "warning",
    object: `StatefulSet ${s.namespace}/${s.cluster}`,
    message: `liveness probe tighter than suggested: ${tight.map((k) => `${k} ${probe[k]} < ${SUGGESTED_LIVENESS[k]}`).join(", ")}`,
    resolution: "a liveness probe that is too aggressive restarts a slow control plane: set controlPlane.statefulSet.probes.livenessProbe to initialDelaySeconds 60, periodSeconds 20, failureThreshold 5",
  };
  return [found];
};
