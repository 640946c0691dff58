// meta.k8s.io/v1 Table answers for kubectl get: Name and Age plus a few columns per kind.
import type { KubeObject } from "../../../src/kube/object.js";
import type { Served } from "./catalog.js";

interface Column {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority: number;
  cell: (o: KubeObject) => unknown;
}

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** kubectl's HumanDuration: 45s, 5m10s, 3h, 2d, 1y. */
function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

function age(o: KubeObject): string {
  const t = Date.parse(String(o.metadata.creationTimestamp ?? ""));
  return Number.isNaN(t) ? "<unknown>" : humanDuration(Date.now() - t);
}

const col = (name: string, cell: Column["cell"], type = "string", priority = 0, description = name): Column => ({
  name,
  type,
  description,
  priority,
  cell,
});
const NAME: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
  priority: 0,
  cell: (o) => o.metadata.name,
};
const AGE = col(
  "Age",
  age,
  "string",
  0,
  "CreationTimestamp is a timestamp representing the server time when this object was created.",
);

function podReady(o: Any): string {
  const statuses: Any[] = o.status?.containerStatuses ?? [];
  const total = (o.spec?.containers ?? []).length;
  return `${statuses.filter((s) => s.ready).length}/${total}`;
}

function servicePorts(o: Any): string {
  const ports: Any[] = o.spec?.ports ?? [];
  if (ports.length === 0) return "<none>";
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ""}/${p.protocol ?? "TCP"}`).join(",");
}

const EXTRA: Record<string, Column[]> = {
  Pod: [
    col("Ready", podReady),
    col("Status", (o: Any) => o.status?.phase ?? "Pending"),
    col(
      "Restarts",
      (o: Any) => (o.status?.containerStatuses ?? []).reduce((n: number, s: Any) => n + (s.restartCount ?? 0), 0),
      "integer",
    ),
    col("IP", (o: Any) => o.status?.podIP ?? "<none>", "string", 1),
    col("Node", (o: Any) => o.spec?.nodeName ?? "<none>", "string", 1),
  ],
  Event: [
    col("Type", (o: Any) => o.type ?? ""),
    col("Reason", (o: Any) => o.reason ?? ""),
    col("Object", (o: Any) => `${String(o.involvedObject?.kind ?? "").toLowerCase()}/${o.involvedObject?.name ?? ""}`),
    col("Message", (o: Any) => o.message ?? ""),
  ],
  Namespace: [col("Status", (o: Any) => o.status?.phase ?? "Active")],
  Node: [
    col("Status", (o: Any) =>
      (o.status?.conditions ?? []).some((c: Any) => c.type === "Ready" && c.status === "True") ? "Ready" : "NotReady",
    ),
    col("Roles", () => "<none>"),
  ],
  Service: [
    col("Type", (o: Any) => o.spec?.type ?? "ClusterIP"),
    col("Cluster-IP", (o: Any) => o.spec?.clusterIP ?? "<none>"),
    col("External-IP", (o: Any) => (o.spec?.externalIPs ?? []).join(",") || "<none>"),
    col("Port(s)", servicePorts),
  ],
  ConfigMap: [
    col("Data", (o: Any) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length, "integer"),
  ],
  Secret: [
    col("Type", (o: Any) => o.type ?? "Opaque"),
    col("Data", (o: Any) => Object.keys(o.data ?? {}).length, "integer"),
  ],
  ServiceAccount: [],
  Deployment: [
    col("Ready", (o: Any) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`),
    col("Up-to-date", (o: Any) => o.status?.updatedReplicas ?? 0, "integer"),
    col("Available", (o: Any) => o.status?.availableReplicas ?? 0, "integer"),
  ],
  StatefulSet: [col("Ready", (o: Any) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`)],
  PersistentVolumeClaim: [
    col("Status", (o: Any) => o.status?.phase ?? "Pending"),
    col("Volume", (o: Any) => o.spec?.volumeName ?? ""),
  ],
  Lease: [col("Holder", (o: Any) => o.spec?.holderIdentity ?? "")],
};

function lastSeen(o: Any): string {
  const t = Date.parse(String(o.lastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp ?? ""));
  return Number.isNaN(t) ? "<unknown>" : humanDuration(Date.now() - t);
}

function columnsFor(served: Served): Column[] {
  // Events read like upstream's: LAST SEEN first, no NAME column.
  if (served.kind === "Event" && served.group === "") return [col("Last Seen", lastSeen), ...EXTRA.Event!];
  const extra = EXTRA[served.kind] ?? [];
  // Wide columns (priority 1) come after Age, as kubectl -o wide shows them.
  return [NAME, ...extra.filter((c) => c.priority === 0), AGE, ...extra.filter((c) => c.priority > 0)];
}

/** The partial object metadata kubectl uses for labels, namespaces and sorting. */
function rowObject(o: KubeObject, include: string | null): unknown {
  if (include === "None") return undefined;
  if (include === "Object") return o;
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata };
}

export function toTable(
  served: Served,
  objects: readonly KubeObject[],
  listMeta: Record<string, unknown>,
  includeObject: string | null,
  withColumns = true,
): Record<string, unknown> {
  const columns = columnsFor(served);
  const rows = objects.map((o) => {
    const row: Record<string, unknown> = { cells: columns.map((c) => c.cell(o)) };
    const obj = rowObject(o, includeObject);
    if (obj !== undefined) row.object = obj;
    return row;
  });
  const table: Record<string, unknown> = { kind: "Table", apiVersion: "meta.k8s.io/v1", metadata: listMeta };
  if (withColumns) table.columnDefinitions = columns.map(({ cell: _c, ...def }) => def);
  else table.columnDefinitions = null;
  table.rows = rows;
  return table;
}
