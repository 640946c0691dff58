// Publishes what this replica answers for into the status ConfigMap (its own key), for vc's hand-over and vc doctor.
import type { Logger } from "../model/log.js";
import { formatReplicaStatus, isFresh, parseReplicaStatus, type ReplicaStatus } from "../model/proxy-status.js";
import type { HostClient } from "./host-client.js";
import { asRecord, at } from "./json.js";

export interface StatusReportOptions {
  /** The ConfigMap, as `namespace/name`. */
  configMap: { namespace: string; name: string };
  /** This replica's key in it (its pod's name). */
  replica: string;
  /** How often it is written. */
  intervalMs: number;
  /** What to write (without the time and interval). */
  report(): Omit<ReplicaStatus, "at" | "intervalSeconds">;
  /** True once there is something worth writing (the first load is done). */
  ready(): boolean;
  log: Logger;
}

/** Statuses of replicas gone this long (in their intervals) are removed by the others. */
const FORGET_AFTER_INTERVALS = 10;

/**
 * Writes the replica's status every interval (merge patch of its key only, so replicas never overwrite each other)
 * and removes the keys of replicas long gone. A failure is logged and tried again at the next interval.
 */
export function startStatusReport(host: HostClient, opts: StatusReportOptions): { stop(): Promise<void> } {
  const { namespace, name } = opts.configMap;
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  let stopped = false;
  let warned = false;
  const write = async (): Promise<void> => {
    const now = Date.now();
    const status: ReplicaStatus = {
      at: new Date(now).toISOString(),
      intervalSeconds: Math.max(1, Math.round(opts.intervalMs / 1000)),
      ...opts.report(),
    };
    const current = await host.get(path, "configmaps", { maxBytes: 4 * 1024 * 1024 });
    if (current.status !== 200) throw new Error(`cannot read ConfigMap ${namespace}/${name}: HTTP ${current.status}`);
    const data: Record<string, string | null> = { [opts.replica]: formatReplicaStatus(status) };
    for (const [key, value] of Object.entries(asRecord(at(current.body, "data")) ?? {})) {
      if (key === opts.replica) continue;
      const other = parseReplicaStatus(typeof value === "string" ? value : undefined);
      const gone = other
        ? !isFresh({ ...other, intervalSeconds: other.intervalSeconds * (FORGET_AFTER_INTERVALS / 3) }, now)
        : true;
      if (gone) data[key] = null;
    }
    const res = await host.send("PATCH", path, "configmaps", {
      body: { data },
      contentType: "application/merge-patch+json",
      maxBytes: 4 * 1024 * 1024,
    });
    if (res.status !== 200) throw new Error(`cannot write ConfigMap ${namespace}/${name}: HTTP ${res.status}`);
  };
  const tick = async (): Promise<void> => {
    if (opts.ready()) {
      try {
        await write();
        warned = false;
      } catch (err) {
        if (!warned)
          opts.log.warn("cannot publish the proxy's status", { error: err instanceof Error ? err.message : err });
        warned = true;
      }
    }
    if (stopped) return;
    // Until the first load is done, look again soon; then every interval.
    timer = setTimeout(() => (round = tick()), opts.ready() ? opts.intervalMs : Math.min(opts.intervalMs, 1000));
    timer.unref();
  };
  round = tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
