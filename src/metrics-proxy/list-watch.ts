// Keeps a collection of host objects in step: LIST (paged, bounded in bytes), then WATCH from its version; again on
// 410.
import { AnswerTooLarge, type HostClient } from "./host-client.js";
import { errorFromFailure, errorFromHost, type HostAccess } from "./host-errors.js";
import { asRecord, at, stringAt, type JsonRecord } from "./json.js";
import type { Logger } from "../model/log.js";
import type { ApiError } from "./status.js";

/** Ask for metadata only (PartialObjectMetadata), or the full object from a server that cannot give it. */
const METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const METADATA_WATCH_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

/** Where a LIST's items go: added one page at a time, then put in place of what was there. */
interface Rebuild {
  add(item: JsonRecord): void;
  commit(): void;
}

/** What is kept in step, and how it is read. */
export interface ListWatchTarget {
  /** The collection's path without query, e.g. `/api/v1/pods` or `/api/v1/namespaces/ns/pods`. */
  path: string;
  /** The LIST and WATCH label selector. */
  labelSelector: string;
  /** Which permission a refusal names (`verb` is filled in). */
  access: Omit<HostAccess, "verb">;
  /** Starts a rebuild from a LIST. */
  rebuild(): Rebuild;
  /** Applies one watch event. */
  apply(type: WatchEventType, object: JsonRecord): void;
}

export interface ListWatchOptions {
  /** Objects a LIST page asks for (default 500); halved while a page is longer than `maxPageBytes`. */
  pageSize?: number;
  /** Most bytes of one LIST page (default 16 MiB). */
  maxPageBytes?: number;
  /** Most bytes of one watch event (default 4 MiB); a longer one ends the watch and the collection is listed again. */
  maxEventBytes?: number;
  /** Delay before retrying a failed LIST (default 1 s). */
  retryMs?: number;
}

export class ListWatch {
  private readonly abort = new AbortController();
  private synced = false;
  private healthy = false;
  private error: ApiError | undefined;
  private waiters: Array<() => void> = [];
  private loop: Promise<void> | undefined;
  private readonly pageSize: number;
  private readonly maxPageBytes: number;

  constructor(
    private readonly client: HostClient,
    private readonly target: ListWatchTarget,
    private readonly log: Logger,
    private readonly opts: ListWatchOptions = {},
  ) {
    this.pageSize = opts.pageSize ?? 500;
    this.maxPageBytes = opts.maxPageBytes ?? 16 * 1024 * 1024;
  }

  /** True once the first LIST has filled the target. */
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
    return { verb, ...this.target.access };
  }

  private get selector(): string {
    return encodeURIComponent(this.target.labelSelector);
  }

  /** One LIST, page by page into a rebuild; returns the version to watch from. */
  private async list(): Promise<string> {
    const rebuild = this.target.rebuild();
    let cont = "";
    let resourceVersion = "";
    let limit = this.pageSize;
    do {
      const page = `limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`;
      const path = `${this.target.path}?labelSelector=${this.selector}&${page}`;
      let res: Awaited<ReturnType<HostClient["get"]>>;
      try {
        res = await this.client.get(path, this.target.access.resource, {
          accept: METADATA_LIST_ACCEPT,
          maxBytes: this.maxPageBytes,
          signal: this.abort.signal,
        });
      } catch (err) {
        // A page too long for the bound: ask the same page again in smaller parts.
        if (err instanceof AnswerTooLarge && limit > 1) {
          limit = Math.max(1, Math.floor(limit / 2));
          continue;
        }
        throw errorFromFailure(err, this.access("list"));
      }
      if (res.status !== 200) throw errorFromHost(res, this.access("list"), false);
      const items = at(res.body, "items");
      if (Array.isArray(items))
        for (const item of items) {
          const obj = asRecord(item);
          if (obj) rebuild.add(obj);
        }
      resourceVersion = stringAt(res.body, "metadata", "resourceVersion") ?? "";
      cont = stringAt(res.body, "metadata", "continue") ?? "";
    } while (cont);
    rebuild.commit();
    return resourceVersion;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    const retryMs = this.opts.retryMs ?? 1000;
    while (!signal.aborted) {
      let rv: string;
      try {
        rv = await this.list();
      } catch (err) {
        if (signal.aborted) return;
        this.healthy = false;
        this.error = err as ApiError;
        this.log.warn(`listing host ${this.target.access.resource} failed`, { error: this.error.message });
        await sleep(retryMs, signal);
        continue;
      }
      this.healthy = true;
      this.error = undefined;
      if (!this.synced) {
        this.synced = true;
        for (const w of this.waiters.splice(0)) w();
      }
      const refused = await this.watchFrom(rv, signal);
      if (refused) {
        this.healthy = false;
        this.error = refused;
        this.log.warn(`host refused the ${this.target.access.resource} watch`, { error: refused.message });
        await sleep(retryMs, signal);
        continue;
      }
      if (!signal.aborted) await sleep(Math.min(retryMs, 200), signal);
    }
  }

  /**
   * Watches from `rv` until the host says the version is gone (410), the connection fails or an event is too long;
   * then the caller lists again. Returns the refusal when the host refused the watch itself (e.g. RBAC without watch).
   */
  private async watchFrom(startRv: string, signal: AbortSignal): Promise<ApiError | undefined> {
    let rv = startRv;
    let relist = false;
    while (!signal.aborted && !relist) {
      const from = `resourceVersion=${encodeURIComponent(rv)}&allowWatchBookmarks=true&timeoutSeconds=300`;
      const path = `${this.target.path}?watch=1&labelSelector=${this.selector}&${from}`;
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
              this.target.apply(ev.type, object);
          },
          signal,
          { accept: METADATA_WATCH_ACCEPT, maxLineBytes: this.opts.maxEventBytes ?? 4 * 1024 * 1024 },
        );
        if (status !== 200 && status !== 0)
          return errorFromHost({ status, body: statusBody, text: "" }, this.access("watch"), false);
      } catch (err) {
        this.healthy = false;
        this.log.warn(`host ${this.target.access.resource} watch failed`, {
          error: err instanceof Error ? err.message : String(err),
        });
        relist = true;
      }
    }
    return undefined;
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
