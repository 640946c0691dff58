// Doctor checks of what a client connects to: the control plane's pod exists and is Ready, its service account exists.
import { finding } from "./coverage.js";
import { eventsAbout } from "../../health/pod-causes.js";
import { controlPlanePod, statefulSetSpec, syncerServiceAccount } from "./facts.js";
import type { Check } from "./types.js";

/** The StatefulSet wants a control plane but its first pod does not exist; the StatefulSet's events say why. */
export const controlPlanePodMissing: Check = (s) => {
  if (!s.statefulSet) return [];
  const replicas = statefulSetSpec(s)?.replicas ?? 1;
  if (replicas < 1 || controlPlanePod(s)) return [];
  const name = `${s.cluster}-0`;
  const refused = eventsAbout(s, "StatefulSet", s.statefulSet.metadata.name)
    .filter((e) => e.reason === "FailedCreate")
    .pop();
  const message =
    `the StatefulSet wants ${replicas} replica(s) but pod ${name} does not exist: the virtual API ` +
    `server does not answer${refused ? ` (last FailedCreate: ${refused.message})` : ""}`;
  const how =
    `read why the pod is not created (kubectl -n ${s.namespace} describe statefulset ` +
    `${s.statefulSet.metadata.name}): a quota, a missing service account or an admission policy may refuse it`;
  return [
    finding(
      "connection",
      {
        check: "control-plane-pod",
        severity: "error",
        object: `StatefulSet ${s.namespace}/${s.statefulSet.metadata.name}`,
        message,
      },
      how,
    ),
  ];
};

/** The control plane's pod runs but is not Ready: its Service sends no traffic to it. */
export const controlPlaneReady: Check = (s) => {
  const pod = controlPlanePod(s);
  if (pod?.status?.phase !== "Running") return [];
  const ready = pod.status.conditions?.find((c) => c.type === "Ready");
  if (!ready || ready.status === "True") return [];
  const probe = eventsAbout(s, "Pod", pod.metadata.name)
    .filter((e) => /probe failed/i.test(e.message))
    .pop();
  const why = probe ? probe.message : `${ready.reason ?? "Ready False"}${ready.message ? `: ${ready.message}` : ""}`;
  const message =
    `the control plane's pod runs but is not Ready (${why}): connections to the virtual API server ` +
    `hang or are refused`;
  return [
    finding(
      "connection",
      { check: "control-plane-ready", severity: "error", object: `Pod ${s.namespace}/${pod.metadata.name}`, message },
      `read its logs (vc debug collect ${s.cluster})`,
    ),
  ];
};

/** The service account the control plane runs as exists (without it the StatefulSet cannot create its pod). */
export const controlPlaneServiceAccount: Check = (s) => {
  if (!s.statefulSet || s.unreadable?.serviceAccounts) return [];
  const sa = syncerServiceAccount(s);
  if (s.serviceAccounts.some((o) => o.metadata.name === sa.name)) return [];
  const message = `the control plane runs as service account ${sa.name}, which does not exist in ${s.namespace}`;
  return [
    finding(
      "connection",
      {
        check: "control-plane-service-account",
        severity: "error",
        object: `ServiceAccount ${sa.namespace}/${sa.name}`,
        message,
      },
      `apply the cluster (vc apply --cluster ${s.cluster}) to create it`,
    ),
  ];
};
