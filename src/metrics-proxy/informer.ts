// Keeps the pod index in step with the host: LIST the cluster's pods in the host namespace, then WATCH from that version.
import { LABELS } from "../translate/keys.js";
import type { HostClient } from "./host-client.js";
import { asRecord, at, stringAt } from "./json.js";
import { errorFromFailure, errorFromHost, type HostAccess } from "./host-errors.js";
import type { Logger } from "../model/log.js";
import type { HostPod, PodIndex } from "./pod-index.js";
import type { ApiError } from "./status.js";

const PAGE = 500;

export class PodInformer {
  private readonly abort = new AbortController();
  private synced = false;
  private healthy = false;
  private error: ApiError | undefined;
  private waiters: Array<() => void> = [];
  private loop: Promise<void> | undefined;

  constructor(
    private readonly client: HostClient,
    private readonly hostNamespace: string,
    private readonly index: PodIndex,
    private readonly log: Logger,
    private readonly retryMs = 1000,
  ) {}

  private get selector(): string {
    return encodeURIComponent(`${LABELS.managedBy}=${this.index.cluster}`);
  }

  private get basePath(): string {
    return `/api/v1/namespaces/${encodeURIComponent(this.hostNamespace)}/pods`;
  }

  /** True once the first LIST has filled the index. */
  get isSynced(): boolean {
    return this.synced;
  }

  /** True while the host answers: the last LIST succeeded and the watch is not failing. */
  get isHealthy(): boolean {
    return this.healthy;
  }

  /** The last host failure, cleared by the next successful LIST. */
  get lastError(): ApiError | undefined {
    return this.error;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves true once synced, false after `timeoutMs`. */
  waitSynced(timeoutMs: number): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.synced), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private access(verb: "list" | "watch"): HostAccess {
    return { verb, resource: "pods", group: "", namespace: this.hostNamespace };
  }

  private async list(): Promise<string> {
    const pods: HostPod[] = [];
    let cont = "";
    let resourceVersion = "";
    do {
      const path = `${this.basePath}?labelSelector=${this.selector}&limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`;
      const res = await this.client.get(path, "pods").catch((err) => {
        throw errorFromFailure(err, this.access("list"));
      });
      if (res.status !== 200) throw errorFromHost(res, this.access("list"), false);
      const items = at(res.body, "items");
      if (Array.isArray(items)) pods.push(...(items as HostPod[]));
      resourceVersion = stringAt(res.body, "metadata", "resourceVersion") ?? "";
      cont = stringAt(res.body, "metadata", "continue") ?? "";
    } while (cont);
    this.index.replace(pods);
    return resourceVersion;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      let rv: string;
      try {
        rv = await this.list();
      } catch (err) {
        this.healthy = false;
        this.error = err as ApiError;
        this.log.warn("listing host pods failed", { error: this.error.message });
        await sleep(this.retryMs, signal);
        continue;
      }
      this.healthy = true;
      this.error = undefined;
      if (!this.synced) {
        this.synced = true;
        this.log.info("pod index synced", { pods: this.index.size });
        for (const w of this.waiters.splice(0)) w();
      }
      // Watch from rv until the host says the version is gone (410) or the connection fails; then relist.
      let relist = false;
      let refused: ApiError | undefined;
      while (!signal.aborted && !relist) {
        const path = `${this.basePath}?watch=1&labelSelector=${this.selector}&resourceVersion=${encodeURIComponent(rv)}&allowWatchBookmarks=true&timeoutSeconds=300`;
        let statusBody: unknown;
        try {
          const status = await this.client.watch(
            path,
            (event) => {
              const ev = asRecord(event);
              if (ev?.kind === "Status") statusBody = ev;
              if (ev?.type === "ERROR" || ev?.kind === "Status") {
                relist = true;
                return;
              }
              const newRv = stringAt(ev, "object", "metadata", "resourceVersion");
              if (newRv) rv = newRv;
              const object = asRecord(ev?.object);
              if (object && (ev?.type === "ADDED" || ev?.type === "MODIFIED" || ev?.type === "DELETED"))
                this.index.apply(ev.type, object as unknown as HostPod);
            },
            signal,
          );
          if (status !== 200 && status !== 0) {
            // The host refused the watch itself (e.g. RBAC without "watch"): report it and back off.
            refused = errorFromHost({ status, body: statusBody, text: "" }, this.access("watch"), false);
            relist = true;
          }
        } catch (err) {
          this.healthy = false;
          this.log.warn("host pod watch failed", { error: err instanceof Error ? err.message : String(err) });
          relist = true;
        }
      }
      if (refused) {
        this.healthy = false;
        this.error = refused;
        this.log.warn("host refused the pod watch", { error: refused.message });
        await sleep(this.retryMs, signal);
        continue;
      }
      if (!signal.aborted) await sleep(Math.min(this.retryMs, 200), signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
