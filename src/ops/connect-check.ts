// Does the virtual API server answer, and as whom: the check `vc connect` makes before it changes a kubeconfig.
import { KubeConfig } from "@kubernetes/client-node";
import { allowPlainHttp, KubeApiError, KubeClient } from "../host/client.js";
import { askServer, recordedName } from "../host/identity.js";
import { shown } from "../model/escape.js";
import { API_SERVICE_PORT } from "../render/controlPlane.js";
import { names } from "../render/meta.js";
import type { KubeconfigDoc } from "../host/kubeconfig-file.js";
import { ConnectError, printKubeconfig } from "./connect.js";

export interface ServerAnswer {
  /** The user the server confirmed (SelfSubjectReview, TokenReview, or the accepted client certificate's CN). */
  user?: string;
  /** The last review vc sent. */
  via: "SelfSubjectReview" | "TokenReview" | "SelfSubjectAccessReview";
  /**
   * One line for the person: who they are there, or what the kubeconfig claims (unverified) when the server cannot
   * tell.
   */
  line: string;
}

export interface CheckContext {
  name: string;
  namespace: string;
  hostContext: string;
  /** The secret the kubeconfig came from, for messages. */
  secret: string;
  log?: (line: string) => void;
}

/**
 * Asks the virtual API server who the kubeconfig's user is (identity.ts askServer: SelfSubjectReview where served,
 * else a TokenReview of its own token or a SelfSubjectAccessReview, which any authenticated user may create, so an
 * answer proves the credentials work). A name the server did not confirm is shown as `unverified:`. Throws a
 * ConnectError saying how to reach the server when it does not answer, and naming the credentials when it refuses
 * them (401).
 */
export async function checkVirtualServer(standalone: KubeconfigDoc, ctx: CheckContext): Promise<ServerAnswer> {
  const log = ctx.log ?? (() => {});
  const client = clientFor(standalone);
  try {
    const answer = await askServer(client, log);
    const id = answer.identity;
    const name = shown(id.name);
    if (answer.via === "SelfSubjectReview" && answer.refused)
      return { via: answer.via, line: "answered, but may not tell who you are (SelfSubjectReview forbidden)" };
    if (id.verified) {
      const how = id.from === "client certificate" ? "client certificate, accepted by the server" : id.from;
      return { user: id.name, via: answer.via, line: `you are "${name}" (${how})` };
    }
    if (answer.refused)
      return {
        via: answer.via,
        line:
          `answered, but refused the self-review (403): the server may take you as anonymous (the kubeconfig ` +
          `claims ${shown(recordedName(id))})`,
      };
    return {
      via: answer.via,
      line:
        `authenticated (SelfSubjectAccessReview; this server has no SelfSubjectReview and did not confirm who ` +
        `you are: ${shown(recordedName(id))}, ${id.from})`,
    };
  } catch (err) {
    throw explain(err, client.server, ctx);
  } finally {
    client.close();
  }
}

/**
 * A client of the virtual cluster's kubeconfig: two tries, a refused connection not retried, the process's time budget.
 */
function clientFor(standalone: KubeconfigDoc): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromString(printKubeconfig(standalone));
  allowPlainHttp(kc);
  return new KubeClient(kc, { retry: { attempts: 2 }, budget: { retryRefused: false } });
}

function explain(err: unknown, server: string, ctx: CheckContext): ConnectError {
  if (err instanceof KubeApiError && err.status === 401) {
    return new ConnectError(
      `the virtual API server ${server} refused the credentials of secret ${ctx.namespace}/${ctx.secret} (401 ` +
        `Unauthorized): your kubeconfig was not changed. ` +
        `The control plane may not have renewed its kubeconfig yet, or its client certificate expired: check it ` +
        `with vc connect ${ctx.name} -n ${ctx.namespace} --print, ` +
        `restart the control plane (kubectl rollout restart statefulset/${ctx.name} -n ${ctx.namespace}), then ` +
        `connect again`,
    );
  }
  const reason = err instanceof KubeApiError ? `${err.status} ${err.reason}` : shortReason(err);
  const service = names.service(ctx.name);
  return new ConnectError(
    `the virtual API server ${server} does not answer (${reason}): your kubeconfig was not changed. ` +
      `If that is the address inside the host cluster, reach it from here through a port-forward ` +
      `(kubectl port-forward --context ${ctx.hostContext} -n ${ctx.namespace} svc/${service} ` +
      `8443:${API_SERVICE_PORT}) and connect with ` +
      `vc connect ${ctx.name} -n ${ctx.namespace} --server https://localhost:8443, or pass --server with an ` +
      `address that reaches it (an ingress or load balancer). ` +
      `If the control plane is down, see vc doctor ${ctx.name}. --no-check writes the context without this check`,
  );
}

/** The cause of a transport failure without the request line the client puts in front of it. */
function shortReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code;
  const found =
    /(ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|certificate|self[- ]signed|timed out|did not answer|connection refused)/i.exec(
      message,
    )?.[0];
  return code ?? found ?? message;
}
