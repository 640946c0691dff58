// Reading the host as far as the user may: a fleet-wide LIST, else one LIST per namespace, with what is forbidden
// reported as not visible instead of failing the command.
import { HostError, type Host, type ListOptions } from "./host.js";

export const NOT_VISIBLE = "not visible to you";

/** True for the API server's 403: the user may not read it. */
export function isForbidden(err: unknown): err is HostError {
  return err instanceof HostError && err.status === 403;
}

/** The answer, or undefined when the user may not read it (403). */
export async function unlessForbidden<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (isForbidden(err)) return undefined;
    throw err;
  }
}

/**
 * Objects of one kind in `namespaces`: one fleet-wide LIST when the user may make it, else one LIST per namespace.
 * `hidden` holds the namespaces the user may not read.
 */
export async function listVisible<T>(
  host: Host,
  path: (namespace?: string) => string,
  namespaces: readonly string[],
  options: ListOptions = {},
): Promise<{ items: T[]; hidden: Set<string> }> {
  const all = await unlessForbidden(host.list<T>(path(), options));
  if (all) return { items: all, hidden: new Set() };
  const hidden = new Set<string>();
  const items: T[] = [];
  for (const ns of [...new Set(namespaces)].sort()) {
    const some = await unlessForbidden(host.list<T>(path(ns), options));
    if (some) items.push(...some);
    else hidden.add(ns);
  }
  return { items, hidden };
}

/** Nothing of a cluster can be read: the user may not read its host namespace. */
export class NotVisibleError extends Error {
  constructor(
    readonly namespace: string,
    readonly what: string,
  ) {
    super(`namespace ${namespace}: ${NOT_VISIBLE} (no permission to read ${what})`);
  }
}
