// Maps failed host requests to the proxy's Status errors: 403 naming the missing permission, 503 "metrics not
// available".
import { ApiError, unavailable } from "./status.js";
import { HostUnreachable, type HostResponse } from "./host-client.js";
import { stringAt } from "./json.js";

/** The host request that failed, as an RBAC rule would name it. */
export interface HostAccess {
  verb: "get" | "list" | "watch";
  resource: string;
  group: string;
  namespace?: string;
}

/** The permission a host access needs, in the words of an RBAC denial. */
function describeAccess(a: HostAccess): string {
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : "at the cluster scope";
  return `${a.verb} resource "${a.resource}" in API group "${a.group}" ${scope}`;
}

function hostMessage(res: HostResponse): string {
  const m = stringAt(res.body, "message") ?? res.text.slice(0, 200).trim();
  return m ? ` (host said: ${m})` : "";
}

/**
 * The error for a host answer that is not 200. `metricsApi` marks requests to the host metrics API, whose
 * 404 or 503 means the API is not registered or its server is down.
 */
export function errorFromHost(res: HostResponse, access: HostAccess, metricsApi: boolean): ApiError {
  if (res.status === 403) {
    return new ApiError(
      "Forbidden",
      "the host refused the metrics proxy's service account: " +
        `it needs permission to ${describeAccess(access)}; grant it with RBAC${hostMessage(res)}`,
    );
  }
  if (res.status === 401) {
    return unavailable(
      `the host rejected the metrics proxy's credentials (401) for ${describeAccess(access)}${hostMessage(res)}`,
    );
  }
  if (metricsApi && (res.status === 404 || res.status === 503)) {
    return unavailable(
      `the host metrics API ${access.group} answered ${res.status}: ` +
        `it is not registered or its server is down${hostMessage(res)}`,
    );
  }
  return unavailable(
    `the host answered ${res.status} to ${access.verb} ${access.resource}.${access.group || "core"}${hostMessage(res)}`,
  );
}

/** The error for a thrown host request failure. */
export function errorFromFailure(err: unknown, access: HostAccess): ApiError {
  if (err instanceof ApiError) return err;
  const why =
    err instanceof HostUnreachable
      ? `the host is not reachable: ${err.message}`
      : String(err instanceof Error ? err.message : err);
  return unavailable(`${why} (while trying to ${access.verb} ${access.resource}.${access.group || "core"})`);
}
