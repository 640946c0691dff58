// What `vc doctor` reads from the host (a snapshot) and what it reports (findings with the spec's resolutions).
import type { KubeObject } from "../../kube/object.js";
import type { Diagnostic } from "../../model/diagnostic.js";
import type { Values } from "../../model/values.js";
import type { AccessAnswer } from "./access.js";
import type { CertificateFacts } from "./tls-cert.js";
import type { VirtualSnapshot } from "./virtual.js";

/**
 * How much a finding matters: `error` is a fault that breaks something now (exit 1); `warning` is a likely problem
 * or evidence of one (exit 0, 1 with `--strict`); `note` is a setting the spec only suggests changing (exit 0).
 */
export type Severity = "error" | "warning" | "note";

export const SEVERITIES: readonly Severity[] = ["error", "warning", "note"];

export interface Finding {
  /** Stable identifier of the check (`pod-pending`, `crash-loop`, `metrics-api`, ...). */
  check: string;
  severity: Severity;
  /** The object concerned, `Kind namespace/name`. */
  object: string;
  message: string;
  /** What to do (spec section 7 where it has a row). */
  resolution: string;
}

/** Everything the checks look at, read once from the host; secret values never enter it (names only). */
export interface HostSnapshot {
  cluster: string;
  namespace: string;
  namespaceObject?: KubeObject;
  statefulSet?: KubeObject;
  /** Pods of the host namespace: the control plane and the synced workload pods. */
  pods: KubeObject[];
  events: KubeObject[];
  pvcs: KubeObject[];
  /** The host's APIService of the metrics group the proxy reads (`v1beta1.<hostApiGroup>`), undefined when absent. */
  metricsApiService?: KubeObject;
  /** The ConfigMap `vc-init-<cluster>` the control plane applies into the virtual cluster at start, when it exists. */
  initManifests?: KubeObject;
  /**
   * The effective values the control plane runs with, read from its config Secret (`vc-config-<cluster>`): vc renders
   * it without credentials, and the database endpoint is blanked here all the same.
   */
  liveValues?: Values;
  /** ServiceAccounts of the host namespace. */
  serviceAccounts: KubeObject[];
  /** Services of the host namespace, and those of other namespaces that mesh routes name. */
  services: KubeObject[];
  virtualServices: KubeObject[];
  destinationRules: KubeObject[];
  /** Reads of the host that took longer than the slow-read threshold while the snapshot was gathered. */
  slowReads: Array<{ path: string; ms: number }>;
  /** LISTs that stopped at their bound (objects or bytes a tenant wrote), with why and how many objects were read. */
  boundedReads?: Array<{ path: string; why: string; read: number }>;
  /** Deployments of the host namespace (a cluster's own metrics proxy of before the shared one). */
  deployments: KubeObject[];
  /**
   * The host's shared metrics proxy (deploy/metrics-proxy/, in vc-system): its Deployment and the ConfigMap in which
   * its replicas say which clusters they answer for; undefined when not read (see unreadable.sharedProxy).
   */
  sharedProxy?: { deployment?: KubeObject; status?: KubeObject; tlsSecret: boolean };
  /**
   * The host authorizer's answers to the permission questions of the checks (SubjectAccessReviews); undefined when not
   * asked.
   */
  access?: AccessAnswer[];
  gateways: KubeObject[];
  /** Pods in any namespace matched by some Gateway selector. */
  ingressPods: KubeObject[];
  /** Services of the namespaces those pods run in (the ingress gateway's Service among them). */
  ingressServices: KubeObject[];
  /** The certificates of the Gateways' TLS Secrets (`namespace/name`), from `tls.crt` only. */
  tlsCertificates?: Record<string, CertificateFacts>;
  /** When the snapshot was read (ISO): certificate validity is judged at this time. */
  checkedAt?: string;
  /**
   * cert-manager Certificates of the host namespace, read only when a Gateway names a TLS Secret; undefined when not
   * read.
   */
  certificates?: KubeObject[];
  /**
   * `namespace/name` of the secrets that exist among those looked up (`tls.credentialName`, the shared proxy's TLS).
   */
  existingSecrets: string[];
  /**
   * `apiVersion/Kind` of the mesh and metrics kinds the host does not serve (API discovery); undefined when not read.
   */
  missingKinds?: string[];
  /**
   * Who suspended the cluster's reconciliation at run time and why (a restore), from vc's status record; undefined when
   * not.
   */
  suspendedBy?: string;
  /**
   * The mesh objects the repository renders for the cluster (translated names), when its folder is valid; undefined
   * otherwise.
   */
  rendered?: KubeObject[];
  /** The errors of the repository's values files of the cluster, when they do not validate. */
  valuesErrors?: Diagnostic[];
  /**
   * What was read inside the virtual cluster through its API server; undefined when not read (see unreadable.virtual).
   */
  virtual?: VirtualSnapshot;
  /** NetworkPolicies of the host namespace; undefined when not read. */
  networkPolicies?: KubeObject[];
  /** The host API server's addresses (the `kubernetes` Endpoints), which the syncer connects to. */
  apiServerEndpoints?: Array<{ ip: string; port: number }>;
  /** Effective values from the repository, when the cluster folder was found. */
  values?: Values;
  /** What could not be read (forbidden, failed), as `what: why`; checks that need it are skipped, not guessed. */
  unreadable?: Partial<Record<Readable, string>>;
}

/** Parts of the snapshot a check may depend on. */
export type Readable =
  | "namespace"
  | "statefulSet"
  | "pods"
  | "events"
  | "volumeClaims"
  | "deployments"
  | "apiService"
  | "sharedProxy"
  | "access"
  | "status"
  | "networkPolicies"
  | "virtual"
  | "gateways"
  | "ingressPods"
  | "ingressServices"
  | "secrets"
  | "discovery"
  | "config"
  | "initManifests"
  | "serviceAccounts"
  | "services"
  | "mesh"
  | "certificates";

export type Check = (s: HostSnapshot) => Finding[];

export function podRef(p: { metadata: { name: string; namespace?: string } }): string {
  return `Pod ${p.metadata.namespace ?? ""}/${p.metadata.name}`;
}
