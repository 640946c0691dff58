// `vc version`: this vc's version and, from a host, the reconciler's (its Deployment's image) and the API server's.
import type { KubeObject } from "../kube/object.js";
import { KubeApiError, type KubeClient } from "../host/client.js";
import { packageInfo } from "../model/package.js";
import { recordsNamespace } from "../translate/keys.js";

/** The label the reconciler's Deployment carries (deploy/reconciler/deployment.yaml). */
const RECONCILER_SELECTOR = "app.kubernetes.io/name=vc-reconciler";

export interface Versions {
  client: { version: string; node: string };
  /** The reconciler found on the host: its image's tag, where it runs and how many replicas are ready. */
  reconciler?: { version: string; deployment: string; image: string; ready: string } | { error: string };
  /** The API server's `/version`. */
  server?: { gitVersion: string; platform?: string } | { error: string };
}

/** This vc's version. */
export function clientVersion(): Versions["client"] {
  return { version: packageInfo().version, node: process.version };
}

/** The tag of an image reference (`ghcr.io/vc-project/vc:0.1.0` -> `0.1.0`), or its digest, or `latest`. */
export function imageVersion(image: string): string {
  const at = image.indexOf("@");
  if (at >= 0) return image.slice(at + 1);
  const slash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  return colon > slash ? image.slice(colon + 1) : "latest";
}

const why = (err: unknown): string =>
  err instanceof KubeApiError && err.status === 403
    ? "not allowed to read it with these credentials"
    : ((err as Error).message ?? String(err));

/** The versions of this vc, the reconciler's Deployment in the records namespace and the API server. */
export async function hostVersions(client: KubeClient): Promise<Versions> {
  const namespace = recordsNamespace();
  const [server, reconciler] = await Promise.all([
    client
      .request<{ gitVersion?: string; platform?: string }>("GET", "/version")
      .then((v): Versions["server"] => ({ gitVersion: v.gitVersion ?? "unknown", platform: v.platform }))
      .catch((err: unknown) => ({ error: why(err) })),
    client
      .listPath<KubeObject>(`/apis/apps/v1/namespaces/${namespace}/deployments`, {
        labelSelector: RECONCILER_SELECTOR,
      })
      .then((items): Versions["reconciler"] => {
        const d = items[0];
        if (!d) return { error: `no Deployment labelled ${RECONCILER_SELECTOR} in ${namespace}` };
        const spec = d.spec as { template?: { spec?: { containers?: Array<{ image?: string }> } }; replicas?: number };
        const image = spec.template?.spec?.containers?.[0]?.image ?? "";
        const ready = (d.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0;
        return {
          version: imageVersion(image),
          deployment: `${namespace}/${d.metadata.name}`,
          image,
          ready: `${ready}/${spec.replicas ?? 1}`,
        };
      })
      .catch((err: unknown) => ({ error: why(err) })),
  ]);
  return { client: clientVersion(), reconciler, server };
}
