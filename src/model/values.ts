// The effective values of a virtual cluster: the values file with every default filled in.
// The defaults themselves live in schemas/values.schema.json (the one source of truth); this is their shape.

interface Quantities {
  cpu?: string;
  memory?: string;
}

interface EnvVar {
  name: string;
  value: string;
}

interface ImageRef {
  repository: string;
  tag: string;
  pullPolicy: "Always" | "IfNotPresent" | "Never";
}

export interface Values {
  controlPlane: {
    statefulSet: {
      image: ImageRef;
      replicas: number;
      resources: { requests: Quantities; limits: Quantities };
      env: EnvVar[];
      probes: { livenessProbe: { initialDelaySeconds: number; periodSeconds: number; failureThreshold: number } };
      enableServiceLinks: boolean;
    };
    backingStore: {
      kvstore: {
        embedded: { enabled: boolean; migrateFromDeployedKvstore: boolean };
        persistence: { enabled: boolean; size: string; storageClass: string };
      };
      database: {
        external: {
          enabled: boolean;
          /** Connection URL; never rendered in plain text (it goes into a Secret vc owns). */
          endpoint: string;
          /** Alternative to `endpoint`: an existing Secret in the host namespace holding the URL. */
          endpointSecretRef?: { name: string; key: string };
        };
      };
    };
  };
  policies: {
    resourceQuota: { enabled: boolean; quota: Record<string, string> };
  };
  sync: {
    toHost: {
      pods: { enabled: boolean };
      services: { enabled: boolean };
      persistentVolumeClaims: { enabled: boolean };
      customResources: Record<string, { enabled: boolean }>;
    };
    fromHost: {
      /** Sync real host nodes into the virtual cluster; `all` syncs every node, not only those running its pods. */
      nodes: { enabled: boolean; all: boolean };
    };
  };
  integrations: {
    certManager: { enabled: boolean };
    mesh: {
      enabled: boolean;
      sync: {
        toHost: {
          destinationRules: { enabled: boolean };
          gateways: { enabled: boolean };
          virtualServices: { enabled: boolean };
        };
      };
    };
    /** The metrics integration: the metrics proxy answers the virtual cluster's metrics API from the host. */
    metricsServer: {
      enabled: boolean;
      pods: boolean;
      nodes: boolean;
      /** `hostApiGroup`: the host's metrics API group the proxy reads (`--host-api-group`). */
      proxy: { image: ImageRef; replicas: number; cacheTTL: string; hostApiGroup: string };
    };
  };
  deploy: {
    /** The built-in metrics server inside the virtual cluster (not together with the integration). */
    metricsServer: { enabled: boolean };
  };
  privateNodes: { enabled: boolean };
}

/** The mesh resource names as they appear in `sync.toHost.customResources` keys (`<plural>.<group>`). */
export const MESH_CUSTOM_RESOURCE_KEYS = {
  virtualServices: "virtualservices.networking.mesh.io",
  destinationRules: "destinationrules.networking.mesh.io",
  gateways: "gateways.networking.mesh.io",
} as const;

const MESH_NAMES: Record<string, keyof typeof MESH_CUSTOM_RESOURCE_KEYS> = {
  virtualservices: "virtualServices",
  virtualservice: "virtualServices",
  vs: "virtualServices",
  destinationrules: "destinationRules",
  destinationrule: "destinationRules",
  dr: "destinationRules",
  gateways: "gateways",
  gateway: "gateways",
  gw: "gateways",
};

/**
 * The mesh resource a `sync.toHost.customResources` key names, however it is spelled: plural, singular, kind or
 * short name, in any case, bare or with the mesh's group (suffix `mesh.io`), with or without a version
 * (`virtualservices`, `VirtualService`, `vs`, `virtualservice.networking.mesh.io`,
 * `virtualservices.v1beta1.networking.mesh.io`); undefined for any other resource.
 */
export function meshResourceOf(key: string): keyof typeof MESH_CUSTOM_RESOURCE_KEYS | undefined {
  const [name = "", ...rest] = key.trim().toLowerCase().split(".");
  const kind = MESH_NAMES[name];
  if (!kind) return undefined;
  const group = (/^v\d+((alpha|beta)\d+)?$/.test(rest[0] ?? "") ? rest.slice(1) : rest).join(".");
  return group === "" || group === "mesh.io" || group.endsWith(".mesh.io") ? kind : undefined;
}

/** The switch of each mesh kind under `integrations.mesh.sync.toHost`. */
const MESH_SWITCHES: Readonly<Record<string, keyof Values["integrations"]["mesh"]["sync"]["toHost"]>> = {
  VirtualService: "virtualServices",
  DestinationRule: "destinationRules",
  Gateway: "gateways",
};

/** True when the cluster's values sync this mesh kind to the host. */
export function meshKindEnabled(values: Values, kind: string): boolean {
  const toggle = Object.hasOwn(MESH_SWITCHES, kind) ? MESH_SWITCHES[kind] : undefined;
  return (
    values.integrations.mesh.enabled && toggle !== undefined && values.integrations.mesh.sync.toHost[toggle].enabled
  );
}
