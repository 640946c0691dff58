// Keeps the pod index in step with the host: one LIST + WATCH of the pods vc's clusters sync (metadata only).
import { LABELS } from "../translate/keys.js";
import type { HostClient } from "./host-client.js";
import { ListWatch, type ListWatchOptions } from "./list-watch.js";
import type { Logger } from "../model/log.js";
import type { HostPod, PodIndex } from "./pod-index.js";

/** Which pods are read: every namespace's pods carrying the ownership label, or one cluster's in its namespace. */
export type PodSelection = { kind: "host" } | { kind: "cluster"; cluster: string; hostNamespace: string };

/** The LIST + WATCH of the pods of `selection` into `index`. */
export function podInformer(
  client: HostClient,
  selection: PodSelection,
  index: PodIndex,
  log: Logger,
  opts: ListWatchOptions = {},
): ListWatch {
  const scoped = selection.kind === "cluster";
  return new ListWatch(
    client,
    {
      path: scoped ? `/api/v1/namespaces/${encodeURIComponent(selection.hostNamespace)}/pods` : "/api/v1/pods",
      labelSelector: scoped ? `${LABELS.managedBy}=${selection.cluster}` : LABELS.managedBy,
      access: { resource: "pods", group: "", ...(scoped ? { namespace: selection.hostNamespace } : {}) },
      rebuild: () => {
        const next = index.rebuild();
        return { add: (item) => next.add(item as unknown as HostPod), commit: () => next.commit() };
      },
      apply: (type, object) => index.apply(type, object as unknown as HostPod),
    },
    log,
    opts,
  );
}
