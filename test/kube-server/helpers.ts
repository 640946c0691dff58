// Small HTTP helpers for the test server's own tests: JSON requests with the admin token.
import type { KubeServer } from "../support/kube-server/index.js";

export interface Reply {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export async function call(
  server: KubeServer,
  method: string,
  path: string,
  body?: unknown,
  opts: { contentType?: string; token?: string | null; accept?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (opts.token !== null) headers.Authorization = `Bearer ${opts.token ?? "admin"}`;
  if (body !== undefined) headers["Content-Type"] = opts.contentType ?? "application/json";
  if (opts.accept) headers.Accept = opts.accept;
  const res = await fetch(server.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export function configMap(
  name: string,
  data: Record<string, string> = {},
  labels?: Record<string, string>,
  namespace = "default",
) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, ...(labels ? { labels } : {}) }, data };
}
