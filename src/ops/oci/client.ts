// A small OCI distribution API client: manifests and blobs, pull and push, bearer-token and basic auth.
import { createHash } from "node:crypto";
import { basicHeader, parseChallenge, type Credentials } from "./auth.js";

export class RegistryError extends Error {
  constructor(
    message: string,
    readonly status = 0,
  ) {
    super(message);
  }
}

export interface RegistryOptions {
  credentials?: Credentials;
  /** Talk HTTP instead of HTTPS (default: only for localhost / 127.0.0.1 / ::1). */
  plainHttp?: boolean;
}

export interface Fetched {
  status: number;
  mediaType: string;
  bytes: Buffer;
  digest: string;
  headers: Headers;
}

export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function isLoopback(registry: string): boolean {
  const host = registry.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

export class RegistryClient {
  readonly base: string;
  private tokens = new Map<string, string>();
  private basic = false;

  constructor(
    readonly registry: string,
    private readonly options: RegistryOptions = {},
  ) {
    const plain = options.plainHttp ?? isLoopback(registry);
    this.base = `${plain ? "http" : "https"}://${registry}`;
  }

  /** A request with the auth dance: on 401, answer the challenge (bearer token or basic) once and resend. */
  async request(
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: Buffer; scope: string },
  ): Promise<Response> {
    const send = () => {
      const headers: Record<string, string> = { ...init.headers };
      const token = this.tokens.get(init.scope);
      if (token) headers.Authorization = `Bearer ${token}`;
      else if (this.basic && this.options.credentials) headers.Authorization = basicHeader(this.options.credentials);
      return this.fetch(method, path, headers, init.body);
    };
    let res = await send();
    if (res.status !== 401) return res;
    const challenge = parseChallenge(res.headers.get("www-authenticate"));
    await res.arrayBuffer();
    if (challenge?.scheme === "bearer") {
      this.tokens.set(init.scope, await this.fetchToken(challenge.params, init.scope));
    } else if (challenge?.scheme === "basic") {
      if (!this.options.credentials)
        throw new RegistryError(
          `${this.registry} requires credentials: set VC_REGISTRY_USERNAME and VC_REGISTRY_PASSWORD, or docker login`,
          401,
        );
      if (this.basic) throw new RegistryError(`${this.registry} refused the credentials (401)`, 401);
      this.basic = true;
    } else {
      throw new RegistryError(`${this.registry} answered 401 without a usable WWW-Authenticate challenge`, 401);
    }
    res = await send();
    if (res.status === 401) {
      await res.arrayBuffer();
      throw new RegistryError(`${this.registry} refused the credentials for ${init.scope} (401)`, 401);
    }
    return res;
  }

  private async fetch(
    method: string,
    pathOrUrl: string,
    headers: Record<string, string>,
    body?: Buffer,
  ): Promise<Response> {
    const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : `${this.base}${pathOrUrl}`;
    try {
      return await fetch(url, { method, headers, body, redirect: "follow" });
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      throw new RegistryError(`cannot reach registry ${this.registry} (${url}): ${cause ?? (err as Error).message}`);
    }
  }

  /** The bearer token flow: GET realm?service=&scope= with basic credentials when there are some. */
  private async fetchToken(params: Record<string, string>, scope: string): Promise<string> {
    if (!params.realm) throw new RegistryError(`${this.registry} sent a bearer challenge without a realm`, 401);
    const url = new URL(params.realm);
    if (params.service) url.searchParams.set("service", params.service);
    url.searchParams.set("scope", scope);
    const headers: Record<string, string> = {};
    if (this.options.credentials) headers.Authorization = basicHeader(this.options.credentials);
    const res = await this.fetch("GET", url.toString(), headers);
    const text = await res.text();
    if (!res.ok)
      throw new RegistryError(
        `token request to ${url.origin}${url.pathname} failed: ${res.status} ${text.slice(0, 200)}`,
        res.status,
      );
    let body: { token?: string; access_token?: string };
    try {
      body = JSON.parse(text);
    } catch {
      throw new RegistryError(`token service ${url.origin} did not answer JSON`);
    }
    const token = body.token ?? body.access_token;
    if (!token) throw new RegistryError(`token service ${url.origin} answered without a token`);
    return token;
  }

  private async failed(res: Response, what: string): Promise<never> {
    const text = await res.text();
    let detail = text.slice(0, 300);
    try {
      const errors = (JSON.parse(text) as { errors?: Array<{ code?: string; message?: string }> }).errors;
      if (errors?.length) detail = errors.map((e) => `${e.code}: ${e.message}`).join("; ");
    } catch {
      // keep the text
    }
    throw new RegistryError(`${what}: ${res.status} ${detail}`, res.status);
  }

  /** GETs a manifest by tag or digest; the digest is computed over the bytes received. */
  async getManifest(repository: string, reference: string, accept: string[]): Promise<Fetched> {
    const res = await this.request("GET", `/v2/${repository}/manifests/${reference}`, {
      headers: { Accept: accept.join(", ") },
      scope: `repository:${repository}:pull`,
    });
    if (!res.ok) return this.failed(res, `manifest ${repository}:${reference}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    return {
      status: res.status,
      mediaType: (res.headers.get("content-type") ?? "").split(";")[0]!.trim(),
      bytes,
      digest: sha256(bytes),
      headers: res.headers,
    };
  }

  /** Downloads a blob and checks its digest and size while streaming; returns the bytes when `keep`. */
  async getBlob(repository: string, digest: string, size: number, keep: boolean): Promise<Buffer | undefined> {
    const res = await this.request("GET", `/v2/${repository}/blobs/${digest}`, {
      scope: `repository:${repository}:pull`,
    });
    if (!res.ok) return this.failed(res, `blob ${digest}`);
    const hash = createHash("sha256");
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      total += chunk.length;
      if (keep) chunks.push(Buffer.from(chunk));
    }
    const actual = `sha256:${hash.digest("hex")}`;
    if (actual !== digest) throw new RegistryError(`blob ${digest} is corrupt: its content hashes to ${actual}`);
    if (total !== size) throw new RegistryError(`blob ${digest} has ${total} bytes, the manifest says ${size}`);
    return keep ? Buffer.concat(chunks) : undefined;
  }

  /** Uploads a blob (monolithic POST then PUT) unless it is there already; returns its digest. */
  async pushBlob(repository: string, bytes: Buffer): Promise<string> {
    const digest = sha256(bytes);
    const scope = `repository:${repository}:pull,push`;
    const head = await this.request("HEAD", `/v2/${repository}/blobs/${digest}`, { scope });
    if (head.ok) return digest;
    const start = await this.request("POST", `/v2/${repository}/blobs/uploads/`, { scope });
    if (start.status !== 202) return this.failed(start, `starting the upload of ${digest}`);
    await start.arrayBuffer();
    const location = new URL(start.headers.get("location") ?? "", this.base);
    location.searchParams.set("digest", digest);
    const put = await this.request("PUT", location.toString(), {
      headers: { "Content-Type": "application/octet-stream", "Content-Length": String(bytes.length) },
      body: bytes,
      scope,
    });
    if (put.status !== 201) return this.failed(put, `uploading ${digest}`);
    await put.arrayBuffer();
    return digest;
  }

  /** PUTs a manifest under a tag (or its digest); returns the digest. */
  async pushManifest(repository: string, reference: string, bytes: Buffer, mediaType: string): Promise<string> {
    const res = await this.request("PUT", `/v2/${repository}/manifests/${reference}`, {
      headers: { "Content-Type": mediaType },
      body: bytes,
      scope: `repository:${repository}:pull,push`,
    });
    if (res.status !== 201) return this.failed(res, `pushing manifest ${repository}:${reference}`);
    await res.arrayBuffer();
    return sha256(bytes);
  }
}
