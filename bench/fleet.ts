// Generates a deterministic, valid fleet repository (clusters/<name>/{values.yaml,cluster.yaml,mesh/*.yaml}) for
// benchmarks.
import { readdirSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { dump, loadAll } from "js-yaml";

export interface FleetOptions {
  /** Number of cluster folders. */
  clusters: number;
  /** Mesh documents per cluster: the Gateways, then VirtualService + DestinationRule pairs per service. */
  meshPerCluster: number;
  /**
   * "flow": mesh documents written with flow collections under their top-level keys (`metadata: {name: x}`). Default
   * "block".
   */
  style?: "block" | "flow";
  /** Gateways per cluster (default 1), each serving public hosts of its own; counted in meshPerCluster. */
  gateways?: number;
  /** HTTP routes per VirtualService (default 2): the size of a mesh manifest. */
  routes?: number;
  /** Each VirtualService and DestinationRule in a file of its own (default: a service's pair in one file). */
  filePerDocument?: boolean;
  /** Cluster names of 40 to 45 characters and longer service names (fleetClusterName's when false). */
  longNames?: boolean;
}

/** Fleet shapes the benches measure by name (`--shape=`): the generator's options but the cluster count. */
export const FLEET_SHAPES = {
  /** The bench's fleet since issue #26: 5 mesh documents in 3 files (a Gateway, two services), short names. */
  bench: { meshPerCluster: 5 },
  /**
   * A fleet shaped otherwise: 8 mesh documents, each in a file of its own (two Gateways, three services whose
   * VirtualServices have 4 routes, with their DestinationRules), names of 40 to 45 characters: 23 host objects and
   * 9 KB of YAML a cluster, twice the bench's (20 and 4.2 KB).
   */
  wide: { meshPerCluster: 8, gateways: 2, routes: 4, filePerDocument: true, longNames: true },
} satisfies Record<string, Omit<FleetOptions, "clusters">>;

export type FleetShape = keyof typeof FLEET_SHAPES;

const REGIONS = ["europe-west4", "us-central1", "asia-southeast1", "southamerica-east1"];

/** The cluster folder name of the i-th cluster of a fleet generated with these options. */
export function clusterNameOf(i: number, opts: Pick<FleetOptions, "longNames"> = {}): string {
  if (!opts.longNames) return fleetClusterName(i);
  return `${TEAMS[i % TEAMS.length]}-${REGIONS[i % REGIONS.length]}-production-${String(i).padStart(5, "0")}`;
}

const TEAMS = ["payments", "search", "checkout", "catalog", "identity", "billing", "media", "ledger"];
const SERVICES = [
  "productpage",
  "reviews",
  "ratings",
  "details",
  "cart",
  "orders",
  "users",
  "inventory",
  "shipping",
  "pricing",
  "images",
  "search",
];

/** The cluster folder name of the i-th cluster (stable; DNS-1123). */
export function fleetClusterName(i: number): string {
  return `${TEAMS[i % TEAMS.length]}-${String(i).padStart(4, "0")}`;
}

/**
 * Writes the fleet under `dir` (creating `dir/clusters`, replacing any earlier one). Same options give the same bytes.
 */
export async function generateFleet(dir: string, opts: FleetOptions): Promise<void> {
  const root = join(dir, "clusters");
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  for (let i = 0; i < opts.clusters; i++) {
    const name = clusterNameOf(i, opts);
    const cdir = join(root, name);
    await mkdir(join(cdir, "mesh"), { recursive: true });
    await writeFile(join(cdir, "cluster.yaml"), clusterYaml(name, i));
    await writeFile(join(cdir, "values.yaml"), valuesYaml(i));
    for (const [file, text] of meshFiles(i, opts))
      await writeFile(join(cdir, "mesh", file), opts.style === "flow" ? toFlow(text) : text);
  }
}

/** The same documents with every collection below the top level in flow style. */
function toFlow(text: string): string {
  return loadAll(text)
    .map((d) => dump(d, { flowLevel: 1, lineWidth: -1 }))
    .join("---\n");
}

function clusterYaml(name: string, i: number): string {
  return `# Host placement of ${name}\nnamespace: vc-${name}\nsuspend: false\nprune: ${i % 10 !== 9}\n`;
}

function valuesYaml(i: number): string {
  const big = i % 3 === 0;
  return `controlPlane:
  statefulSet:
    resources:
      requests:
        cpu: ${big ? "500m" : "200m"}
        memory: ${big ? "1Gi" : "512Mi"}
      limits:
        cpu: ${big ? "2000m" : "1000m"}
        memory: ${big ? "4Gi" : "2Gi"}
    env:
      - name: LOG_LEVEL
        value: ${i % 7 === 0 ? "debug" : "info"}
    probes:
      livenessProbe:
        initialDelaySeconds: 60
        periodSeconds: 20
        failureThreshold: 5
  backingStore:
    kvstore:
      embedded:
        enabled: true
      persistence:
        enabled: ${i % 2 === 0}
        size: 10Gi
policies:
  resourceQuota:
    enabled: true
    quota:
      requests.cpu: "${4 + (i % 4)}"
      requests.memory: ${8 + (i % 4) * 2}Gi
      limits.cpu: "${8 + (i % 4)}"
      limits.memory: ${16 + (i % 4) * 2}Gi
sync:
  toHost:
    pods:
      enabled: true
    services:
      enabled: true
integrations:
  mesh:
    enabled: true
    sync:
      toHost:
        gateways:
          enabled: true
  metricsServer:
    enabled: ${i % 2 === 1}
`;
}

function meshFiles(i: number, opts: FleetOptions): Array<[string, string]> {
  const files: Array<[string, string]> = [];
  const count = opts.meshPerCluster;
  if (count <= 0) return files;
  const ns = i % 2 === 0 ? "default" : "shop";
  const gateways = Math.max(1, Math.min(opts.gateways ?? 1, count));
  // Each cluster serves public hosts of its own: a public host is a fleet-wide claim (one cluster per host).
  for (let g = 0; g < gateways; g++) {
    const name = g === 0 ? "public" : `public-${g}`;
    const host = `${g === 0 ? "s" : `g${g}-`}${String(i).padStart(opts.longNames ? 5 : 4, "0")}.example.com`;
    files.push([`${name === "public" ? "gateway" : `gateway-${g}`}.yaml`, gateway(ns, host, name)]);
  }
  let left = count - gateways;
  for (let s = 0; left > 0; s++) {
    const base = opts.longNames ? `${SERVICES[s % SERVICES.length]}-frontend-api` : SERVICES[s % SERVICES.length]!;
    const svc = s < SERVICES.length ? base : `${base}-${Math.floor(s / SERVICES.length)}`;
    const withRule = left > 1;
    // A VirtualService without its DestinationRule routes without subsets (there would be none to name).
    const vs = virtualService(svc, ns, s, opts.routes ?? 2);
    const docs = [withRule ? vs : vs.replace(/^ *subset: .*\n/gm, "")];
    left--;
    if (withRule) {
      docs.push(destinationRule(svc, ns, s));
      left--;
    }
    if (opts.filePerDocument) docs.forEach((doc, d) => files.push([`${svc}-${d === 0 ? "routes" : "rule"}.yaml`, doc]));
    else files.push([`${svc}.yaml`, docs.join("---\n")]);
  }
  return files;
}

function gateway(ns: string, host: string, name = "public"): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  selector:
    app: ingressgateway
  servers:
    - port:
        number: 80
        name: http
        protocol: HTTP
      hosts:
        - "${host}"
    - port:
        number: 443
        name: https
        protocol: HTTPS
      hosts:
        - "${host}"
      tls:
        mode: SIMPLE
        credentialName: shop-cert
`;
}

/** A VirtualService of `routes` HTTP routes (at least 2: a header match, then prefix matches splitting by weight). */
function virtualService(svc: string, ns: string, s: number, routes = 2): string {
  const fault =
    s % 4 === 1
      ? `      fault:
        delay:
          percentage:
            value: 10
          fixedDelay: 5s
        abort:
          percentage:
            value: 1.5
          httpStatus: 503
`
      : "";
  return `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: ${svc}
  namespace: ${ns}
  labels:
    app: ${svc}
spec:
  hosts:
    - ${svc}
  gateways:
    - public
    - mesh
  http:
    - match:
        - headers:
            end-user:
              exact: jason
      route:
        - destination:
            host: ${svc}
            subset: v2
            port:
              number: 9080
${extraRoutes(svc, ns, routes - 2)}    - match:
        - uri:
            prefix: /api/${svc}
      route:
        - destination:
            host: ${svc}.${ns}.svc.cluster.local
            subset: v1
          weight: 80
        - destination:
            host: ${svc}
            subset: v2
          weight: 20
${fault}`;
}

/** `n` more routes of a VirtualService: a versioned prefix and a header each, split between the subsets. */
function extraRoutes(svc: string, ns: string, n: number): string {
  let out = "";
  for (let k = 0; k < n; k++)
    out += `    - match:
        - uri:
            prefix: /v${k + 2}/${svc}
          headers:
            x-tenant-tier:
              exact: tier-${k}
      route:
        - destination:
            host: ${svc}.${ns}.svc.cluster.local
            subset: ${k % 2 === 0 ? "v1" : "v2"}
            port:
              number: 9080
          weight: ${90 - k}
        - destination:
            host: ${svc}
            subset: ${k % 2 === 0 ? "v2" : "v1"}
          weight: ${10 + k}
`;
  return out;
}

function destinationRule(svc: string, ns: string, s: number): string {
  const lb = s % 2 === 0 ? "      simple: LEAST_REQUEST" : "      consistentHash:\n        httpHeaderName: x-user";
  return `apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata:
  name: ${svc}
  namespace: ${ns}
spec:
  host: ${svc}
  trafficPolicy:
    connectionPool:
      tcp:
        maxConnections: 100
      http:
        http1MaxPendingRequests: 10
        http2MaxRequests: 1000
    loadBalancer:
${lb}
    outlierDetection:
      consecutive5xxErrors: 5
      interval: 30s
      baseEjectionTime: 30s
      maxEjectionPercent: 50
    tls:
      mode: ISTIO_MUTUAL
  subsets:
    - name: v1
      labels:
        version: v1
    - name: v2
      labels:
        version: v2
`;
}

/** Every YAML file of a generated fleet under `root/clusters`, sorted: the input of the bare-parse baselines. */
export function fleetYamlFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const ent of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.name.endsWith(".yaml") || ent.name.endsWith(".yml")) out.push(p);
    }
  };
  walk(join(root, "clusters"));
  return out.sort();
}
