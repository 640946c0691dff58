// The label and annotation keys vc puts on host objects: one prefix, defined here and nowhere else.

/** The one prefix of every label and annotation key vc writes on host objects. */
export const PREFIX = "vc.orch.io";

export const LABELS = {
  /**
   * Ownership by a virtual cluster: value is the virtual cluster's name. Carried by every host object
   * that belongs to a virtual cluster: objects vc renders and objects the syncer synchronises (pods).
   * The metrics proxy maps host pods to virtual ones by it; DestinationRule subsets add it so that a
   * subset never selects another tenant's pods.
   */
  managedBy: `${PREFIX}/managed-by`,
  /**
   * The GitOps inventory: value is the virtual cluster's name. Only objects vc itself applied carry it;
   * prune lists and deletes by it, never by anything else, so syncer-created objects are never pruned.
   */
  inventory: `${PREFIX}/inventory`,
  /**
   * Marked the status ConfigMap `vc-status` that vc kept in each host namespace before records (value "true"). Only
   * the migration reads it now (sinks/kube/migrate.ts): statuses live in vc's records (docs/records.md).
   */
  status: `${PREFIX}/status`,
  /**
   * The source that owns the object: value is the owner name of the repository (and folder) vc applied it from
   * (src/model/owner.ts). Carried by every object vc applies and by the status ConfigMap; a run never updates,
   * adopts or prunes what carries another owner (plan/owner.ts), until `vc adopt --from` hands the cluster over.
   */
  owner: `${PREFIX}/owner`,
  /**
   * On a cluster's host Namespace while its metrics integration is on: the host's shared metrics proxy answers for the
   * cluster (it lists Namespaces by this label, which only the platform writes). The value says which nodes' metrics
   * the cluster sees: `synced` (those its pods run on) or `all`.
   */
  metricsProxy: `${PREFIX}/metrics-proxy`,
  /**
   * Marks a platform namespace (value "true"): vc keeps its records and its Leases only in a namespace that carries it,
   * and never applies a cluster into one. Only the platform may label a Namespace (cluster-scoped); vc puts it on a
   * platform namespace only when it creates the namespace itself, never on one that exists.
   */
  platformNamespace: `${PREFIX}/platform-namespace`,
} as const;

export const ANNOTATIONS = {
  /** Name of the object inside the virtual cluster. */
  objectName: `${PREFIX}/object-name`,
  /** Namespace of the object inside the virtual cluster. */
  objectNamespace: `${PREFIX}/object-namespace`,
  /** Repository-relative path of the file the object came from. */
  sourceFile: `${PREFIX}/source-file`,
  /** Commit SHA (or other source revision) the object was rendered from. */
  revision: `${PREFIX}/revision`,
  /**
   * On control-plane pod templates: SHA-256 of the configuration the pods mount (effective values and init
   * manifests), so that a change of either rolls the pods.
   */
  configHash: `${PREFIX}/config-hash`,
  /** On the status ConfigMap: while present the reconciler skips the cluster; the value says who and why. */
  suspendedBy: `${PREFIX}/suspended-by`,
  /** On the leader Lease: a standby replica that received a webhook hands the push to the leader through it. */
  lastPush: `${PREFIX}/last-push`,
  /** On a restore pod: the digest-pinned OCI reference it restores from. */
  restoreFrom: `${PREFIX}/restore-from`,
  /**
   * On a Secret vc renders from a credential written inline in the repository (value "true"): only the live
   * host gets its data; `vc render` and the `dir:` target write it without (see render/secrets.ts).
   */
  inlineCredential: `${PREFIX}/inline-credential`,
} as const;

/** The field manager vc uses for server-side apply. */
export const FIELD_MANAGER = "vc";

/** Value of the `app` label of control-plane pods (spec 1.2: `app=<chart_app_label>`). */
export const CHART_APP_LABEL = "vc";

/** Label selector that lists exactly the objects vc applied for a virtual cluster. */
export function inventorySelector(cluster: string): string {
  return `${LABELS.inventory}=${cluster}`;
}

/** Environment variable naming the records namespace for every command (default DEFAULT_RECORDS_NAMESPACE). */
export const RECORDS_NAMESPACE_ENV = "VC_RECORDS_NAMESPACE";
/** The reconciler's namespace, where vc keeps its records unless told otherwise. */
export const DEFAULT_RECORDS_NAMESPACE = "vc-system";

/** The records namespace: $VC_RECORDS_NAMESPACE, else the reconciler pod's own ($POD_NAMESPACE), else vc-system. */
export function recordsNamespace(env: NodeJS.ProcessEnv = process.env): string {
  return env[RECORDS_NAMESPACE_ENV] || env.POD_NAMESPACE || DEFAULT_RECORDS_NAMESPACE;
}
