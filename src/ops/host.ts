// The host cluster as the operations see it: a few REST verbs over the shared KubeClient (retries, keep-alive).
import type { KubeConfig } from "@kubernetes/client-node";
import { withoutManagedFields, type KubeObject } from "../kube/object.js";
import { KubeApiError, KubeClient, type RequestOptions } from "../host/client.js";
import { listBounded, type BoundedList, type ListBounds } from "../host/bounded-list.js";

/** How to reach the host: a kubeconfig file (default: KUBECONFIG or ~/.kube/config) and a context. */
export interface HostOptions {
  kubeconfig?: string;
  context?: string;
}

/** An API answer that was not a success, with the server's Status message when it sent one. */
export class HostError extends Error {
  constructor(
    readonly status: number,
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

/** The verbs the operations use; paths are API paths such as `/api/v1/namespaces/ns/pods/p`. */
export interface Host {
  /** The context name the host was opened with. */
  readonly contextName: string;
  /** The object, or undefined on 404. */
  get<T = KubeObject>(path: string): Promise<T | undefined>;
  list<T = KubeObject>(path: string, options?: ListOptions): Promise<T[]>;
  /** A LIST of what a tenant may write, stopped at `bounds` (objects and bytes); `stopped` says why when it was. */
  listBounded<T = KubeObject>(path: string, options: ListOptions, bounds: ListBounds): Promise<BoundedList<T>>;
  create<T = KubeObject>(path: string, body: unknown): Promise<T>;
  mergePatch<T = KubeObject>(path: string, patch: unknown): Promise<T>;
  /** Deletes; true when it existed. */
  remove(path: string): Promise<boolean>;
  /** A plain-text answer (pod logs), or undefined on 404 / 400 (no previous container). */
  text(path: string, query?: Record<string, string>): Promise<string | undefined>;
  /** The client-node configuration, for websocket exec. */
  readonly config: KubeConfig;
  /** The shared client underneath (server-side apply, the reconciler's helpers). */
  readonly client: KubeClient;
  /** Frees the connections (keep-alive sockets would hold a CLI process open). */
  close(): void;
}

export function openHost(options: HostOptions): Host {
  return new KubeHost(KubeClient.open({ kubeconfig: options.kubeconfig, context: options.context }));
}

/** The operations' view over the shared KubeClient: its retries, keep-alive and pagination, with 404s as absence. */
export class KubeHost implements Host {
  readonly contextName: string;
  readonly config: KubeConfig;

  constructor(readonly client: KubeClient) {
    this.contextName = client.contextName;
    this.config = client.kc;
  }

  private async json<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    try {
      return await this.client.request<T>(method, path, opts);
    } catch (err) {
      throw hostError(err, path);
    }
  }

  async get<T>(path: string): Promise<T | undefined> {
    return orUndefined(this.json<T>("GET", path), [404]);
  }

  async list<T>(path: string, options: ListOptions = {}): Promise<T[]> {
    try {
      // Each page's objects without their managedFields (no command shows or reads them), before the next page comes.
      return await this.client.listPathMapped<T, T>(path, options, withoutManagedFields);
    } catch (err) {
      const e = hostError(err, path);
      if (e.status === 404) return [];
      throw e;
    }
  }

  async listBounded<T>(path: string, options: ListOptions, bounds: ListBounds): Promise<BoundedList<T>> {
    try {
      return await listBounded<T, T>(this.client, path, options, bounds, withoutManagedFields);
    } catch (err) {
      throw hostError(err, path);
    }
  }

  create<T>(path: string, body: unknown): Promise<T> {
    return this.json<T>("POST", path, { body });
  }

  mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.json<T>("PATCH", path, { body: patch, contentType: "application/merge-patch+json" });
  }

  async remove(path: string): Promise<boolean> {
    return (
      (await orUndefined(
        this.json("DELETE", path).then(() => true),
        [404],
      )) ?? false
    );
  }

  /** 400 too: the API server answers it for the logs of a previous container that does not exist. */
  text(path: string, query?: Record<string, string>): Promise<string | undefined> {
    return orUndefined(this.json<string>("GET", path, { query, response: "text" }), [404, 400]);
  }

  close(): void {
    this.client.close();
  }
}

function hostError(err: unknown, path: string): HostError {
  if (err instanceof HostError) return err;
  if (err instanceof KubeApiError) return new HostError(err.status, path, err.message);
  return new HostError(0, path, (err as Error).message);
}

/** The answer, or undefined when the host answered one of `statuses`. */
async function orUndefined<T>(answer: Promise<T>, statuses: readonly number[]): Promise<T | undefined> {
  try {
    return await answer;
  } catch (err) {
    if (err instanceof HostError && statuses.includes(err.status)) return undefined;
    throw err;
  }
}
