// The proxy's link to the virtual API server it serves, as an aggregated API server has with its cluster: it reads how
// the server's front proxy authenticates (kube-system/extension-apiserver-authentication), asks it to authorize each
// user (SubjectAccessReview), and keeps the caBundle of the APIService that routes to the proxy equal to the proxy's CA.
import type { Logger } from "../model/log.js";
import type { ReviewSender } from "./authorizer.js";
import {
  AUTH_CONFIGMAP_NAME,
  AUTH_CONFIGMAP_NAMESPACE,
  requestHeaderConfig,
  type RequestHeaderConfig,
} from "./front-proxy.js";
import type { HostClient, HostResponse } from "./host-client.js";
import { asRecord, at, stringAt } from "./json.js";

export interface VirtualClusterOptions {
  /** Name of the APIService whose caBundle the proxy keeps current (e.g. `v1beta1.metrics.orch.io`); absent: left alone. */
  apiService?: string;
  log: Logger;
}

function failure(what: string, res: HostResponse): Error {
  const message = stringAt(res.body, "message") ?? res.text.slice(0, 200);
  return new Error(`${what}: HTTP ${res.status}${message ? `: ${message}` : ""}`);
}

export class VirtualCluster {
  /** The front proxy's settings, once read. */
  requestHeader: RequestHeaderConfig | undefined;
  /** The last failure of a refresh (reading the settings or updating the APIService); undefined after a good one. */
  lastError: Error | undefined;
  /** Times the APIService's caBundle was written (for tests and logs). */
  caBundleWrites = 0;
  private readonly listeners: Array<(config: RequestHeaderConfig) => void> = [];

  constructor(
    private readonly client: HostClient,
    private readonly opts: VirtualClusterOptions,
  ) {}

  get server(): string {
    return this.client.server;
  }

  /** Called with the new settings whenever the front proxy's CA or names change. */
  onRequestHeaderChange(listener: (config: RequestHeaderConfig) => void): void {
    this.listeners.push(listener);
  }

  /** Reads the front proxy's settings and brings the APIService's caBundle to `caBundle`; records (never throws) a failure. */
  async refresh(caBundle: Buffer | undefined): Promise<boolean> {
    try {
      await this.loadRequestHeader();
      if (caBundle && this.opts.apiService) await this.ensureCaBundle(this.opts.apiService, caBundle);
      this.lastError = undefined;
      return true;
    } catch (err) {
      this.lastError = err instanceof Error ? err : new Error(String(err));
      this.opts.log.warn("cannot refresh from the virtual API server", {
        server: this.server,
        error: this.lastError.message,
      });
      return false;
    }
  }

  private async loadRequestHeader(): Promise<void> {
    const path = `/api/v1/namespaces/${AUTH_CONFIGMAP_NAMESPACE}/configmaps/${AUTH_CONFIGMAP_NAME}`;
    const res = await this.client.get(path, "configmaps");
    if (res.status !== 200)
      throw failure(
        `cannot read ${AUTH_CONFIGMAP_NAMESPACE}/${AUTH_CONFIGMAP_NAME} from the virtual API server ${this.server}`,
        res,
      );
    const config = requestHeaderConfig(asRecord(at(res.body, "data")));
    const before = this.requestHeader;
    this.requestHeader = config;
    if (before === undefined || JSON.stringify(before) !== JSON.stringify(config)) {
      this.opts.log.info("front proxy settings loaded", {
        allowedNames: config.allowedNames,
        usernameHeaders: config.usernameHeaders,
      });
      for (const l of this.listeners) l(config);
    }
  }

  /** Writes `caBundle` (and clears insecureSkipTLSVerify) on the APIService unless it already holds exactly that. */
  private async ensureCaBundle(name: string, caBundle: Buffer): Promise<void> {
    const path = `/apis/apiregistration.k8s.io/v1/apiservices/${name}`;
    const res = await this.client.get(path, "apiservices");
    if (res.status === 404)
      throw new Error(`APIService ${name} does not exist in the virtual cluster yet (the control plane creates it)`);
    if (res.status !== 200) throw failure(`cannot read APIService ${name}`, res);
    const wanted = caBundle.toString("base64");
    if (stringAt(res.body, "spec", "caBundle") === wanted && at(res.body, "spec", "insecureSkipTLSVerify") !== true)
      return;
    const patch = { spec: { caBundle: wanted, insecureSkipTLSVerify: null } };
    const patched = await this.client.send("PATCH", path, "apiservices", patch, "application/merge-patch+json");
    if (patched.status !== 200) throw failure(`cannot update the caBundle of APIService ${name}`, patched);
    this.caBundleWrites++;
    this.opts.log.info("APIService caBundle updated", { apiService: name });
  }

  /** Sends a SubjectAccessReview to the virtual API server; throws when it does not answer with one. */
  readonly review: ReviewSender = async (review, signal) => {
    const res = await this.client.send(
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      "subjectaccessreviews",
      review,
      "application/json",
      signal,
    );
    if (res.status !== 201 && res.status !== 200) throw failure("SubjectAccessReview", res);
    const status = asRecord(at(res.body, "status")) ?? {};
    const reason = typeof status.reason === "string" ? status.reason : undefined;
    const evaluationError = typeof status.evaluationError === "string" ? status.evaluationError : undefined;
    return {
      allowed: status.allowed === true,
      denied: status.denied === true,
      ...(reason !== undefined ? { reason } : {}),
      ...(evaluationError !== undefined ? { evaluationError } : {}),
    };
  };
}
