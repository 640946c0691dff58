// The host cluster as the operations see it: a few REST verbs over the shared KubeClient (retries, keep-alive).
import type { KubeConfig } from "@kubernetes/client-node";
import fetch, { Headers, type RequestInit } from "node-fetch";
import type { KubeObject } from "../kube/object.js";
import { KubeApiError, KubeClient } from "../target/kube/client.js";

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

/** The operations' view over the shared KubeClient (retries, keep-alive); plain-text answers fetched directly. */
export class KubeHost implements Host {
  readonly contextName: string;
  readonly config: KubeConfig;

  constructor(readonly client: KubeClient) {
    this.contextName = client.contextName;
    this.config = client.kc;
  }

  private async json<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    try {
      return await this.client.request<T>(method, path, { body, contentType });
    } catch (err) {
      if (err instanceof KubeApiError) throw new HostError(err.status, path, err.message);
      throw new HostError(0, path, (err as Error).message);
    }
  }

  async get<T>(path: string): Promise<T | undefined> {
    try {
      return await this.json<T>("GET", path);
    } catch (err) {
      if (err instanceof HostError && err.status === 404) return undefined;
      throw err;
    }
  }

  async list<T>(path: string, options: ListOptions = {}): Promise<T[]> {
    const items: T[] = [];
    let cont: string | undefined;
    do {
      const q = new URLSearchParams({ limit: "500" });
      if (options.labelSelector) q.set("labelSelector", options.labelSelector);
      if (options.fieldSelector) q.set("fieldSelector", options.fieldSelector);
      if (cont) q.set("continue", cont);
      let page: { items?: T[]; metadata?: { continue?: string } } | undefined;
      try {
        page = await this.json("GET", `${path}?${q.toString()}`);
      } catch (err) {
        if (err instanceof HostError && err.status === 404) return [];
        throw err;
      }
      items.push(...(page?.items ?? []));
      cont = page?.metadata?.continue || undefined;
    } while (cont);
    return items;
  }

  create<T>(path: string, body: unknown): Promise<T> {
    return this.json<T>("POST", path, body);
  }

  mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.json<T>("PATCH", path, patch, "application/merge-patch+json");
  }

  async remove(path: string): Promise<boolean> {
    try {
      await this.json("DELETE", path);
      return true;
    } catch (err) {
      if (err instanceof HostError && err.status === 404) return false;
      throw err;
    }
  }

  private async raw(path: string, query?: Record<string, string>) {
    const init = (await this.config.applyToFetchOptions({})) as RequestInit;
    const headers = new Headers(init.headers as Headers | undefined);
    headers.set("Accept", "*/*");
    const qs = query && Object.keys(query).length ? `?${new URLSearchParams(query).toString()}` : "";
    try {
      return await fetch(`${this.client.server}${path}${qs}`, { ...init, headers, method: "GET" });
    } catch (err) {
      throw new HostError(0, path, `cannot reach the host API at ${this.client.server}: ${(err as Error).message}`);
    }
  }

  async text(path: string, query?: Record<string, string>): Promise<string | undefined> {
    const res = await this.raw(path, query);
    const text = await res.text();
    if (res.status === 404 || res.status === 400) return undefined;
    if (!res.ok) throw new HostError(res.status, path, `GET ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text;
  }

  close(): void {
    this.client.close();
  }
}
