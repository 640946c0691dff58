// A LIST of objects someone else may write, bounded in objects and in bytes: paged from the store, stopped at the
// bound.
import { ExpiredContinue, KubeApiError, ResponseTooLarge, type KubeClient, type Query } from "./client.js";

/** Accept header of a metadata-only LIST: each item its metadata alone (kind PartialObjectMetadata). */
const METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

export interface ListBounds {
  /** Objects read at most; one more is read, to tell that there were more. */
  maxObjects: number;
  /** Bytes of answers read at most (over every page). */
  maxBytes: number;
  /** Objects asked for per page (halved while a page is longer than the bytes left). Default 100. */
  pageSize?: number;
  /** Each item its metadata alone: for reads that need no body. */
  metadataOnly?: boolean;
}

export interface BoundedList<T> {
  items: T[];
  /** Why the read stopped before the end of the list (items then holds what was read up to the bound). */
  stopped?: string;
  /** Bytes of answers read. */
  bytes: number;
}

/**
 * Reads the collection at `path` a page at a time from the store, each item mapped as its page arrives (undefined:
 * dropped), until the list ends, `maxObjects` were read, or the answers reach `maxBytes`: a page longer than the bytes
 * left is asked again at half the size, down to one object, and past that the read stops there. A kind the server does
 * not serve (404) is an empty list. What was read stays readable: the caller reports `stopped` and goes on.
 */
export async function listBounded<I, T>(
  client: KubeClient,
  path: string,
  selectors: { labelSelector?: string; fieldSelector?: string },
  bounds: ListBounds,
  map: (item: I) => T | undefined,
): Promise<BoundedList<T>> {
  const out: BoundedList<T> = { items: [], bytes: 0 };
  let read = 0;
  let limit = Math.max(1, Math.min(bounds.pageSize ?? 100, bounds.maxObjects + 1));
  let cont: string | undefined;
  for (;;) {
    const left = bounds.maxBytes - out.bytes;
    const query: Query = { ...selectors, limit: Math.min(limit, bounds.maxObjects + 1 - read), continue: cont };
    let text: string;
    try {
      text = await client.request<string>("GET", path, {
        query,
        maxBytes: left,
        response: "text",
        accept: bounds.metadataOnly ? METADATA_ONLY : "application/json",
      });
    } catch (err) {
      if (err instanceof ResponseTooLarge) {
        if (limit > 1) {
          limit = Math.ceil(limit / 2);
          continue;
        }
        out.bytes = bounds.maxBytes;
        out.stopped = `more than ${bounds.maxBytes} bytes`;
        return out;
      }
      if (cont === undefined && err instanceof KubeApiError && err.status === 404) return out;
      if (cont !== undefined && err instanceof KubeApiError && err.status === 410) throw new ExpiredContinue(err);
      throw err;
    }
    out.bytes += Buffer.byteLength(text);
    const page = JSON.parse(text) as { items?: I[]; metadata?: { continue?: string } };
    for (const item of page.items ?? []) {
      if (read >= bounds.maxObjects) {
        out.stopped = `more than ${bounds.maxObjects} objects`;
        return out;
      }
      read++;
      const mapped = map(item);
      if (mapped !== undefined) out.items.push(mapped);
    }
    cont = page.metadata?.continue || undefined;
    if (!cont) return out;
  }
}
