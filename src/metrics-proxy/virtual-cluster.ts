// The proxy's link to a virtual API server it serves, as an aggregated API server has with its cluster: it reads how
// the server's front proxy authenticates (kube-system/extension-apiserver-authentication), asks it to authorize each
// user (SubjectAccessReview), and keeps the caBundle of the APIService that routes to the proxy trusting the proxy's
// CA.
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
import { certificateBody, pemCertificates } from "./serving-cert.js";

export interface VirtualClusterOptions {
  /**
   * Name of the APIService whose caBundle the proxy keeps current (e.g. `v1beta1.metrics.orch.io`); absent: left alone.
   */
  apiService?: string;
  log: Logger;
}

/**
 * How the proxy's CA goes into the APIService's caBundle: `exact`, the bundle is the proxy's CA and nothing else;
 * `contain`, the proxy's CA is added and the certificates already there stay (another proxy still serves the cluster:
 * the hand-over from a cluster's own proxy to the shared one).
 */
export type CaBundleMode = "exact" | "contain";

function failure(what: string, res: HostResponse): Error {
  const message = stringAt(res.body, "message") ?? res.text.slice(0, 200);
  return new Error(`${what}: HTTP ${res.status}${message ? `: ${message}` : ""}`);
}

/** Bytes of the ConfigMap and APIService read from a virtual API server (whose tenant writes them). */
const MAX_OBJECT_BYTES = 1024 * 1024;

export class VirtualCluster {
  /** The front proxy's settings, once read. */
  requestHeader: RequestHeaderConfig | undefined;
  /** The last failure of a refresh (reading the settings or updating the APIService); undefined after a good one. */
  lastError: Error | undefined;
  /** Times the APIService's caBundle was written (for tests and logs). */
  caBundleWrites = 0;
  /** True when the last refresh found (or made) the APIService's caBundle trusting the proxy's CA. */
  caBundleHolds = false;
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

  /**
   * Reads the front proxy's settings (telling `onLoaded`) and brings the APIService's caBundle to hold `caBundle`
   * (`mode`); records (never throws) a failure. True when both succeeded.
   */
  async refresh(
    caBundle: Buffer | undefined,
    mode: CaBundleMode = "exact",
    onLoaded?: (config: RequestHeaderConfig) => void,
  ): Promise<boolean> {
    try {
      await this.loadRequestHeader();
      // The front proxy's CA is trusted before the APIService routes the aggregator here with the proxy's CA.
      onLoaded?.(this.requestHeader!);
      if (caBundle && this.opts.apiService) await this.ensureCaBundle(this.opts.apiService, caBundle, mode);
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
    const res = await this.client.get(path, "configmaps", { maxBytes: MAX_OBJECT_BYTES });
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
        server: this.server,
        allowedNames: config.allowedNames,
        usernameHeaders: config.usernameHeaders,
      });
      for (const l of this.listeners) l(config);
    }
  }

  /**
   * Writes the caBundle (and clears insecureSkipTLSVerify) on the APIService unless it already holds what `mode` asks.
   */
  private async ensureCaBundle(name: string, caBundle: Buffer, mode: CaBundleMode): Promise<void> {
    this.caBundleHolds = false;
    const path = `/apis/apiregistration.k8s.io/v1/apiservices/${name}`;
    const res = await this.client.get(path, "apiservices", { maxBytes: MAX_OBJECT_BYTES });
    if (res.status === 404)
      throw new Error(`APIService ${name} does not exist in the virtual cluster yet (the control plane creates it)`);
    if (res.status !== 200) throw failure(`cannot read APIService ${name}`, res);
    const current = stringAt(res.body, "spec", "caBundle") ?? "";
    const wanted = mode === "exact" ? caBundle.toString("base64") : union(current, caBundle);
    if (current === wanted && at(res.body, "spec", "insecureSkipTLSVerify") !== true) {
      this.caBundleHolds = true;
      return;
    }
    const patch = { spec: { caBundle: wanted, insecureSkipTLSVerify: null } };
    const patched = await this.client.send("PATCH", path, "apiservices", {
      body: patch,
      contentType: "application/merge-patch+json",
      maxBytes: MAX_OBJECT_BYTES,
    });
    if (patched.status !== 200) throw failure(`cannot update the caBundle of APIService ${name}`, patched);
    this.caBundleWrites++;
    this.caBundleHolds = true;
    this.opts.log.info("APIService caBundle updated", { server: this.server, apiService: name, mode });
  }

  /** Sends a SubjectAccessReview to the virtual API server; throws when it does not answer with one. */
  readonly review: ReviewSender = async (review, signal) => {
    const res = await this.client.send(
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      "subjectaccessreviews",
      { body: review, maxBytes: MAX_OBJECT_BYTES, ...(signal ? { signal } : {}) },
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

  /** Releases the link's connections. */
  close(): void {
    this.client.close();
  }
}

/**
 * The base64 caBundle holding the certificates of `current` (base64 of PEM) and those of `ours` not already in it:
 * `current` itself when it holds them all. A current value that is not PEM is replaced.
 */
function union(current: string, ours: Buffer): string {
  const have = pemCertificates(Buffer.from(current, "base64").toString("utf8"));
  const seen = new Set(have.map(certificateBody));
  const add = pemCertificates(ours.toString("utf8")).filter((c) => !seen.has(certificateBody(c)));
  if (add.length === 0 && have.length > 0) return current;
  return Buffer.from(`${[...have, ...add].join("\n")}\n`).toString("base64");
}
