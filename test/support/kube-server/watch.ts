// Watch streams: chunked JSON lines of {type, object} from a resourceVersion, filtered by namespace and selectors;
// sendInitialEvents=true streams the current objects first and ends them with an initial-events-end bookmark.
import type { ServerResponse } from "node:http";
import type { KubeObject } from "../../../src/kube/object.js";
import { querySelectors } from "./fields.js";
import type { Served } from "./catalog.js";
import { kindKey } from "./objects.js";
import { ApiError, badRequest } from "./status.js";
import type { Store, StoreEvent } from "./store.js";

export interface WatchOptions {
  served: Served;
  namespace?: string;
  query: URLSearchParams;
  /** Turns an object into what the event carries (the object itself, or a Table row). */
  wire: (obj: KubeObject, first: boolean) => unknown;
}

/** Starts a watch on `res`; returns a function that ends it. */
export function startWatch(store: Store, res: ServerResponse, opts: WatchOptions): () => void {
  const { served, query } = opts;
  const { labels: match, fields } = querySelectors(served.kind, query);
  const rvText = query.get("resourceVersion");
  const rv = rvText === null || rvText === "" ? undefined : Number(rvText);
  if (rv !== undefined && (!Number.isInteger(rv) || rv < 0)) throw badRequest(`invalid resource version: ${rvText}`);
  const initialEvents = query.get("sendInitialEvents") === "true";
  if (initialEvents && query.get("allowWatchBookmarks") !== "true")
    throw badRequest("sendInitialEvents requires allowWatchBookmarks=true");
  const key = kindKey(served);
  const ns = served.namespaced ? opts.namespace : undefined;
  const selected = (o: KubeObject): boolean =>
    (ns === undefined || o.metadata.namespace === ns) && match(o.metadata.labels) && fields(o);

  res.writeHead(200, {
    "Content-Type": "application/json",
    "Transfer-Encoding": "chunked",
    "Cache-Control": "no-cache, private",
  });
  // Send the headers now: clients (client-node's Watch, client-go) wait for them before the first event.
  res.flushHeaders();
  let first = true;
  const send = (type: string, obj: unknown): void => {
    res.write(`${JSON.stringify({ type, object: obj })}\n`);
  };
  const emit = (type: string, o: KubeObject): void => {
    send(type, opts.wire(o, first));
    first = false;
  };
  const onEvent = (ev: StoreEvent): void => {
    if (ev.kindKey !== key) return;
    const now = selected(ev.obj);
    if (ev.type === "MODIFIED") {
      const before = ev.old ? selected(ev.old) : now;
      if (now && before) emit("MODIFIED", ev.obj);
      else if (now) emit("ADDED", ev.obj);
      else if (before) emit("DELETED", ev.obj);
    } else if (now) emit(ev.type, ev.obj);
  };

  let ended = false;
  let unsubscribe = (): void => {};
  let timer: NodeJS.Timeout | undefined;
  const end = (): void => {
    if (ended) return;
    ended = true;
    unsubscribe();
    if (timer) clearTimeout(timer);
    res.end();
  };
  res.on("close", end);

  if (rv === undefined || rv === 0 || initialEvents) {
    const current = [...store.entries(key, ns)].map((e) => e.obj).filter(selected);
    current.sort((a, b) =>
      `${a.metadata.namespace ?? ""}/${a.metadata.name}`.localeCompare(
        `${b.metadata.namespace ?? ""}/${b.metadata.name}`,
      ),
    );
    for (const o of current) emit("ADDED", o);
    // The streaming-list protocol (client-go's WatchList): a bookmark marks the end of the initial events.
    if (initialEvents) {
      send("BOOKMARK", {
        kind: served.kind,
        apiVersion: served.apiVersion,
        metadata: {
          resourceVersion: String(store.resourceVersion),
          annotations: { "k8s.io/initial-events-end": "true" },
        },
      });
    }
  } else {
    const history = store.eventsSince(rv);
    if (!history) {
      const err = new ApiError(410, `too old resource version: ${rv} (${store.oldestWatchable + 1})`, "Expired");
      send("ERROR", err.toStatus());
      end();
      return end;
    }
    for (const ev of history) onEvent(ev);
  }
  unsubscribe = store.subscribe(onEvent);
  const timeout = Number(query.get("timeoutSeconds") ?? "");
  if (timeout > 0) timer = setTimeout(end, timeout * 1000);
  return end;
}
