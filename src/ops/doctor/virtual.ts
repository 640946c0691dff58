// What vc doctor reads inside the virtual cluster, through its API server reached as `vc connect` reaches it (the
// kubeconfig the control plane writes into the host Secret `vc-<name>`, its server replaced with --server): the
// APIService list, and for each autoscaler showing `<unknown>` the pod metrics of the workload it scales.
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeObject } from "../../kube/object.js";
import { METRICS_GROUP, METRICS_VERSION } from "../../kube/resources.js";
import { allowPlainHttp, KubeApiError, KubeClient } from "../../host/client.js";
import { printKubeconfig, readVirtualKubeconfig, standaloneKubeconfig } from "../connect.js";
import type { Host } from "../host.js";
import { API_SERVICE_PORT } from "../../render/controlPlane.js";
import { names } from "../../render/meta.js";

/** One autoscaler whose current metrics are unknown, and which of its workload's pods have pod metrics. */
interface UnknownAutoscaler {
  /** `namespace/name` of the HorizontalPodAutoscaler. */
  autoscaler: string;
  /** `Kind namespace/name` of the workload it scales. */
  workload: string;
  /** The workload's pods (names), and those the metrics API answered for. */
  pods: string[];
  withMetrics: string[];
  /** Why the pods or their metrics could not be read. */
  error?: string;
}

export interface VirtualSnapshot {
  /** The server asked. */
  server: string;
  /** The virtual cluster's APIServices. */
  apiServices: KubeObject[];
  autoscalers: UnknownAutoscaler[];
}

const API_SERVICES = "/apis/apiregistration.k8s.io/v1/apiservices";
const AUTOSCALERS = "/apis/autoscaling/v1/horizontalpodautoscalers";
const WORKLOADS: Record<string, string> = {
  Deployment: "deployments",
  StatefulSet: "statefulsets",
  ReplicaSet: "replicasets",
};
const CURRENT_METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics";

interface Hpa {
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec?: { scaleTargetRef?: { kind?: string; name?: string; apiVersion?: string } };
  status?: { currentCPUUtilizationPercentage?: number };
}

/**
 * An autoscaler shows `<unknown>` while it has no current value for any metric (v1: CPU, or v2 metrics in the
 * annotation).
 */
function showsUnknown(hpa: Hpa): boolean {
  if (typeof hpa.status?.currentCPUUtilizationPercentage === "number") return false;
  const current = hpa.metadata.annotations?.[CURRENT_METRICS_ANNOTATION];
  try {
    return !(current && (JSON.parse(current) as unknown[]).length > 0);
  } catch {
    return true;
  }
}

/** A label selector (matchLabels and matchExpressions) in the query form. */
function selectorString(
  sel:
    | {
        matchLabels?: Record<string, string>;
        matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
      }
    | undefined,
): string {
  const terms = Object.entries(sel?.matchLabels ?? {})
    .sort()
    .map(([k, v]) => `${k}=${v}`);
  for (const e of sel?.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(",");
    if (e.operator === "In") terms.push(`${e.key} in (${values})`);
    else if (e.operator === "NotIn") terms.push(`${e.key} notin (${values})`);
    else if (e.operator === "Exists") terms.push(e.key);
    else if (e.operator === "DoesNotExist") terms.push(`!${e.key}`);
  }
  return terms.join(",");
}

/** A client of the virtual cluster's kubeconfig: one try, a short budget (a person waits). */
function clientOf(kubeconfig: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  allowPlainHttp(kc);
  return new KubeClient(kc, { retry: { attempts: 1 }, budget: { retryRefused: false, timeoutMs: 10_000 } });
}

/** The cause of a failure, without the client's own advice (which speaks of the host's kubeconfig). */
function why(err: unknown): string {
  if (err instanceof KubeApiError) return `${err.status} ${err.reason}`;
  const message = err instanceof Error ? err.message : String(err);
  const found =
    /(ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|certificate[^;)(]*|self[- ]signed[^;)(]*|timed out|did not answer|connection refused)/i.exec(
      message,
    )?.[0];
  return (err as { code?: string }).code ?? found ?? message;
}

async function unknownAutoscaler(client: KubeClient, hpa: Hpa): Promise<UnknownAutoscaler> {
  const ns = hpa.metadata.namespace ?? "default";
  const ref = hpa.spec?.scaleTargetRef ?? {};
  const out: UnknownAutoscaler = {
    autoscaler: `${ns}/${hpa.metadata.name}`,
    workload: `${ref.kind ?? "?"} ${ns}/${ref.name ?? "?"}`,
    pods: [],
    withMetrics: [],
  };
  const plural = ref.kind ? WORKLOADS[ref.kind] : undefined;
  if (!plural || !ref.name) return { ...out, error: `it scales a ${ref.kind ?? "workload"} vc doctor does not read` };
  try {
    const workload = await client.request<{ spec?: { selector?: Parameters<typeof selectorString>[0] } }>(
      "GET",
      `/apis/apps/v1/namespaces/${ns}/${plural}/${ref.name}`,
    );
    const selector = selectorString(workload.spec?.selector);
    const pods = await client.listPath<KubeObject>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: selector });
    out.pods = pods.map((p) => p.metadata.name).sort();
    if (out.pods.length === 0) return out;
    const metrics = await client.listPath<KubeObject>(
      `/apis/${METRICS_GROUP}/${METRICS_VERSION}/namespaces/${ns}/pods`,
      { labelSelector: selector },
    );
    const names = new Set(metrics.map((m) => m.metadata.name));
    out.withMetrics = out.pods.filter((p) => names.has(p));
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404 && out.pods.length === 0)
      return { ...out, error: `${out.workload} does not exist` };
    out.error = `${out.pods.length ? "its pod metrics" : "its pods"} could not be read (${why(err)})`;
  }
  return out;
}

/**
 * Reads the virtual cluster. Throws an Error whose message says why it could not (no kubeconfig yet, the server does
 * not answer from here: pass --server with a port-forward), which vc doctor lists as not checked.
 */
export async function readVirtual(
  host: Host,
  cluster: string,
  namespace: string,
  server?: string,
): Promise<VirtualSnapshot> {
  const doc = standaloneKubeconfig(await readVirtualKubeconfig(host, cluster, namespace), cluster, server);
  const client = clientOf(printKubeconfig(doc));
  try {
    let apiServices: KubeObject[];
    try {
      apiServices = await client.listPath<KubeObject>(API_SERVICES);
    } catch (err) {
      const hint = server
        ? ""
        : ` (from outside the host cluster, pass --server with a port-forward: kubectl -n ${namespace} ` +
          `port-forward svc/${names.service(cluster)} 8443:${API_SERVICE_PORT}, then --server https://localhost:8443)`;
      throw new Error(`the virtual API server ${client.server} does not answer (${why(err)})${hint}`);
    }
    const hpas = await client.listPath<Hpa>(AUTOSCALERS).catch(() => [] as Hpa[]);
    const autoscalers: UnknownAutoscaler[] = [];
    for (const hpa of hpas
      .filter(showsUnknown)
      .sort((a, b) =>
        `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
      )) {
      autoscalers.push(await unknownAutoscaler(client, hpa));
    }
    return { server: client.server, apiServices, autoscalers };
  } finally {
    client.close();
  }
}
