// Generates a deterministic, valid fleet repository (clusters/<name>/{values.yaml,cluster.yaml,mesh/*.yaml}) for benchmarks.
import { readdirSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { dump, loadAll } from "js-yaml";

export interface FleetOptions {
  /** Number of cluster folders. */
  clusters: number;
  /** Mesh documents per cluster: one Gateway, then VirtualService + DestinationRule pairs per service. */
  meshPerCluster: number;
  /** "flow": mesh documents written with flow collections under their top-level keys (`metadata: {name: x}`). Default "block". */
  style?: "block" | "flow";
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

/** Writes the fleet under `dir` (creating `dir/clusters`, replacing any earlier one). Same options give the same bytes. */
export async function generateFleet(dir: string, opts: FleetOptions): Promise<void> {
  const root = join(dir, "clusters");
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  for (let i = 0; i < opts.clusters; i++) {
    const name = fleetClusterName(i);
    const cdir = join(root, name);
    await mkdir(join(cdir, "mesh"), { recursive: true });
    await writeFile(join(cdir, "cluster.yaml"), clusterYaml(name, i));
    await writeFile(join(cdir, "values.yaml"), valuesYaml(i));
    for (const [file, text] of meshFiles(i, opts.meshPerCluster))
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

function meshFiles(i: number, count: number): Array<[string, string]> {
  const files: Array<[string, string]> = [];
  if (count <= 0) return files;
  const ns = i % 2 === 0 ? "default" : "shop";
  // Each cluster serves a public host of its own: a public host is a fleet-wide claim (one cluster per host).
  files.push(["gateway.yaml", gateway(ns, `s${String(i).padStart(4, "0")}.example.com`)]);
  let left = count - 1;
  for (let s = 0; left > 0; s++) {
    const svc =
      s < SERVICES.length ? SERVICES[s]! : `${SERVICES[s % SERVICES.length]}-${Math.floor(s / SERVICES.length)}`;
    const withRule = left > 1;
    // A VirtualService without its DestinationRule routes without subsets (there would be none to name).
    const vs = virtualService(svc, ns, s);
    const docs = [withRule ? vs : vs.replace(/^ *subset: .*\n/gm, "")];
    left--;
    if (withRule) {
      docs.push(destinationRule(svc, ns, s));
      left--;
    }
    files.push([`${svc}.yaml`, docs.join("---\n")]);
  }
  return files;
}

function gateway(ns: string, host: string): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: public
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

function virtualService(svc: string, ns: string, s: number): string {
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
    - match:
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
