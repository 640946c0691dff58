// Platform namespaces (records, Leases): verified before vc keeps anything there, created marked when missing.
import type { KubeObject } from "../kube/object.js";
import { KubeApiError, type KubeClient } from "../host/client.js";
import { LABELS } from "../translate/keys.js";

/** What vc keeps in a platform namespace, for messages. */
export type PlatformUse = "records" | "Leases";

/** A namespace vc was asked to keep records or Leases in that is not a platform namespace: nothing is kept there. */
export class PlatformNamespaceError extends Error {}

/** Whether a Namespace carries the platform mark (LABELS.platformNamespace=true). */
export function isPlatformNamespace(ns: KubeObject | undefined): boolean {
  return ns?.metadata.labels?.[LABELS.platformNamespace] === "true";
}

/**
 * Why vc may not keep `use` in the Namespace `ns` (named `name`), or undefined: it lacks the platform mark (whoever
 * made it may have given a tenant rights there), or it is a cluster's host namespace (its inventory label).
 */
function platformNamespaceProblem(ns: KubeObject, name: string, use: PlatformUse): string | undefined {
  const cluster = ns.metadata.labels?.[LABELS.inventory];
  if (cluster !== undefined)
    return (
      `namespace ${name} is the host namespace of cluster ${cluster}: vc never keeps its ${use} where a cluster ` +
      "lives (its syncer may write there); choose another namespace"
    );
  if (!isPlatformNamespace(ns))
    return (
      `namespace ${name} exists without the platform mark (label ${LABELS.platformNamespace}=true): vc keeps its ` +
      `${use} only in a namespace the platform made for them (deploy/reconciler/namespace.yaml), so that no tenant ` +
      "was given rights there first. A namespace of an install older than the mark (an upgrade) is yours: label it " +
      `once (kubectl label namespace ${name} ${LABELS.platformNamespace}=true) after checking that no RoleBinding ` +
      "there grants a tenant anything; otherwise choose another namespace"
    );
  return undefined;
}

/**
 * Verifies the platform namespace `name` before vc reads or keeps `use` there: true when it exists and is fit, false
 * when it does not exist (`create`: made now, marked, by a create that fails if someone made it meanwhile). Throws
 * PlatformNamespaceError when it exists and is not fit. A reader who may not get Namespaces (a user of one host
 * namespace) is not the platform: its read goes on unverified (`create` false), a write does not.
 */
export async function verifyPlatformNamespace(
  client: KubeClient,
  name: string,
  use: PlatformUse,
  opts: { create: boolean },
): Promise<boolean> {
  let ns: KubeObject | undefined;
  try {
    ns = await client.get({ apiVersion: "v1", kind: "Namespace", name });
  } catch (err) {
    if (!opts.create && err instanceof KubeApiError && err.status === 403) return true;
    throw err;
  }
  if (!ns && opts.create) {
    try {
      ns = await client.request<KubeObject>("POST", "/api/v1/namespaces", {
        body: {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name, labels: { [LABELS.platformNamespace]: "true" } },
        },
      });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 409)) throw err;
      ns = await client.get({ apiVersion: "v1", kind: "Namespace", name });
    }
  }
  if (!ns) return false;
  const problem = platformNamespaceProblem(ns, name, use);
  if (problem) throw new PlatformNamespaceError(problem);
  return true;
}

/**
 * The verification of one platform namespace for a store, remembered while the namespace is fit (one GET for the
 * store's life), forgotten when it was missing or refused so that the next use looks again.
 */
export class PlatformNamespaceGuard {
  #verified?: Promise<boolean>;
  #making?: Promise<boolean>;

  constructor(
    readonly client: KubeClient,
    readonly name: string,
    readonly use: PlatformUse,
  ) {}

  /** Before a read: false when the namespace does not exist; throws PlatformNamespaceError when it is not fit. */
  readable(): Promise<boolean> {
    const check = (this.#verified ??= verifyPlatformNamespace(this.client, this.name, this.use, { create: false }));
    check.then(
      (ok) => {
        if (!ok && this.#verified === check) this.#verified = undefined;
      },
      () => {
        if (this.#verified === check) this.#verified = undefined;
      },
    );
    return check;
  }

  /** Before a write: makes the namespace, marked, when it does not exist (once for writes at once); throws if unfit. */
  async ensure(): Promise<void> {
    if (await this.readable()) return;
    if (!this.#making) {
      const made = verifyPlatformNamespace(this.client, this.name, this.use, { create: true });
      this.#making = made;
      this.#verified = made;
      made.then(
        () => (this.#making = undefined),
        () => {
          this.#making = undefined;
          if (this.#verified === made) this.#verified = undefined;
        },
      );
    }
    await this.#making;
  }

  /** Forgets the verification: the namespace was found gone since. */
  forget(): void {
    this.#verified = undefined;
  }
}
