// What the e2e tests of the metrics proxy share: serving and client certificates (openssl), a GET straight to a proxy
// as some client, and the registration of a proxy as a real virtual API server's aggregated metrics API.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import https from "node:https";
import { join } from "node:path";
import type { RunningProxy } from "../../src/metrics-proxy/proxy.js";
import {
  metricsVirtualObjects,
  VIRTUAL_SERVICE_NAME,
  VIRTUAL_SERVICE_NAMESPACE,
} from "../../src/render/metricsProxy.js";
import type { RealKube } from "../support/real-kube.js";
import { HOST_NS } from "../metrics-proxy/fixture.js";

/** A second virtual Service name, for a proxy serving metrics.k8s.io beside one serving metrics.orch.io. */
export const KUBECTL_TOP_SERVICE = "vc-metrics-proxy-top";

function openssl(dir: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/**
 * A CA named `name` and a serving pair it signs for the Services the aggregator dials (it verifies `<svc>.<ns>.svc`).
 */
export function servingPair(dir: string, name: string): { cert: string; key: string; ca: string } {
  openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}-ca.key`,
    "-out",
    `${name}-ca.crt`,
    "-days",
    "2",
    "-subj",
    `/CN=${name}-ca`,
  );
  openssl(
    dir,
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    "/CN=vc-metrics-proxy",
  );
  const sans = [VIRTUAL_SERVICE_NAME, KUBECTL_TOP_SERVICE]
    .map((s) => `DNS:${s}.${VIRTUAL_SERVICE_NAMESPACE}.svc`)
    .join(",");
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${sans},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`);
  openssl(
    dir,
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${name}-ca.crt`,
    "-CAkey",
    `${name}-ca.key`,
    "-CAcreateserial",
    "-out",
    `${name}.crt`,
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
  );
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`), ca: join(dir, `${name}-ca.crt`) };
}

/** A client pair signed by `caCert`/`caKey` with common name `cn`. */
export function clientPair(
  dir: string,
  name: string,
  cn: string,
  caCert: string,
  caKey: string,
): { cert: string; key: string } {
  openssl(
    dir,
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${cn}`,
  );
  writeFileSync(join(dir, `${name}.ext`), "extendedKeyUsage=clientAuth\n");
  openssl(
    dir,
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    caCert,
    "-CAkey",
    caKey,
    "-CAcreateserial",
    "-out",
    `${name}.crt`,
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
  );
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

/** A GET straight to the proxy, trusting `ca`, presenting `client` when given. */
export function direct(
  proxy: RunningProxy,
  path: string,
  ca: string,
  client?: { cert: string; key: string },
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    // The path as given, not normalised by a URL parser (which would resolve `%2e%2e`).
    const req = https.request(
      proxy.url,
      {
        path,
        ca: readFileSync(ca),
        ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
        headers,
        agent: false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/**
 * Registers a proxy as `group`'s aggregated API in the virtual cluster with the objects vc renders, pointed at `port`.
 */
export async function registerInVirtual(
  virtual: RealKube,
  group: string,
  serviceName: string,
  port: number,
): Promise<void> {
  const [service, apiService] = metricsVirtualObjects("a", HOST_NS) as [any, any];
  // The rendered Service names the proxy's host Service; here the proxy listens on this machine.
  service.metadata.name = serviceName;
  service.spec.externalName = "localhost";
  service.spec.ports = [{ name: "https", port, protocol: "TCP" }];
  apiService.metadata.name = `v1beta1.${group}`;
  apiService.spec.group = group;
  apiService.spec.service = { namespace: VIRTUAL_SERVICE_NAMESPACE, name: serviceName, port };
  expect(apiService.spec.insecureSkipTLSVerify, "the rendered APIService verifies the proxy").to.equal(undefined);
  expect(apiService.spec.caBundle, "the rendered APIService leaves its caBundle to the proxy").to.equal(undefined);
  for (const [path, body] of [
    [`/api/v1/namespaces/${VIRTUAL_SERVICE_NAMESPACE}/services`, service],
    ["/apis/apiregistration.k8s.io/v1/apiservices", apiService],
  ] as const) {
    const res = await virtual.request("POST", path, body);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
  }
}
