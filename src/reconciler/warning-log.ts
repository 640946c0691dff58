// Server `Warning` headers of the reconciler's requests as lines of its JSON log, with the cluster being reconciled.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "../model/log.js";
import type { WarningSink } from "../host/warnings.js";

/** The cluster whose reconciliation the current async work belongs to (set around each cluster's run of a pass). */
const current = new AsyncLocalStorage<string>();

/** Runs `fn` as the work of `cluster`: server warnings its requests draw name that cluster. */
export function forCluster<T>(cluster: string, fn: () => Promise<T>): Promise<T> {
  return current.run(cluster, fn);
}

/** A client's warning sink writing one `warn` line per warning: server, request, object and cluster where known. */
export function warningLog(logger: Logger): WarningSink {
  return (w) => {
    const cluster = current.getStore();
    logger.warn("API server warning", {
      warning: w.text,
      server: w.server,
      request: `${w.method} ${w.path}`,
      ...(w.object ? { object: w.object } : {}),
      ...(cluster ? { cluster } : {}),
    });
  };
}
