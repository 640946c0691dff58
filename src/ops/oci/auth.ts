// Registry authentication: credentials from the environment or the docker config, and the WWW-Authenticate challenge.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface Credentials {
  username: string;
  password: string;
}

/**
 * Credentials for a registry: VC_REGISTRY_USERNAME / VC_REGISTRY_PASSWORD, else the `auths` entry of the docker
 * config ($DOCKER_CONFIG/config.json or ~/.docker/config.json). Undefined means anonymous.
 */
export function credentialsFor(registry: string, env: NodeJS.ProcessEnv = process.env): Credentials | undefined {
  if (env.VC_REGISTRY_USERNAME && env.VC_REGISTRY_PASSWORD !== undefined) {
    return { username: env.VC_REGISTRY_USERNAME, password: env.VC_REGISTRY_PASSWORD };
  }
  const file = join(env.DOCKER_CONFIG ?? join(homedir(), ".docker"), "config.json");
  if (!existsSync(file)) return undefined;
  let auths: Record<string, { auth?: string; username?: string; password?: string }> = {};
  try {
    auths = (JSON.parse(readFileSync(file, "utf8")) as { auths?: typeof auths }).auths ?? {};
  } catch {
    return undefined;
  }
  const entry = auths[registry] ?? auths[`https://${registry}`] ?? auths[`http://${registry}`];
  if (!entry) return undefined;
  if (entry.username && entry.password !== undefined) return { username: entry.username, password: entry.password };
  if (entry.auth) {
    const text = Buffer.from(entry.auth, "base64").toString("utf8");
    const i = text.indexOf(":");
    if (i > 0) return { username: text.slice(0, i), password: text.slice(i + 1) };
  }
  return undefined;
}

export function basicHeader(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}`;
}

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parses `Bearer realm="...",service="...",scope="..."` (quoted values may contain commas). */
export function parseChallenge(header: string | null): Challenge | undefined {
  if (!header) return undefined;
  const m = /^\s*(\w+)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  const re = /(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))\s*,?\s*/g;
  for (const p of m[2]!.matchAll(re))
    params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, "$1") : p[3]!;
  return { scheme: m[1]!.toLowerCase(), params };
}
