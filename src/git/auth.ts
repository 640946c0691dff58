// Credentials for a remote git repository, read from a file or the environment and turned into an HTTP header; never
// printed.
import { readFileSync } from "node:fs";

/** Where credentials come from. Environment: VC_GIT_TOKEN, or VC_GIT_USERNAME + VC_GIT_PASSWORD. */
export interface GitAuthOptions {
  /** A file holding a token (one line) or `username:password`. */
  file?: string;
  env?: NodeJS.ProcessEnv;
}

/** An opaque credential: its header is used on requests; its string form never reveals the secret. */
export class GitCredential {
  readonly #header: string;
  constructor(
    readonly username: string,
    password: string,
  ) {
    this.#header = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  }
  headers(): Record<string, string> {
    return { Authorization: this.#header };
  }
  toString(): string {
    return `credential for ${this.username} (secret hidden)`;
  }
  toJSON(): string {
    return this.toString();
  }
}

/** Default username sent with a bare token; GitHub, GitLab and Gitea accept any username with a token as password. */
const TOKEN_USERNAME = "x-access-token";

/** Reads credentials from the file if given, otherwise from the environment; undefined when there are none. */
export function loadGitCredential(opts: GitAuthOptions = {}): GitCredential | undefined {
  const env = opts.env ?? process.env;
  if (opts.file) {
    let text: string;
    try {
      text = readFileSync(opts.file, "utf8").trim();
    } catch (err) {
      throw new Error(
        `cannot read git credentials file ${opts.file}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
    if (!text) throw new Error(`git credentials file ${opts.file} is empty`);
    const colon = text.indexOf(":");
    if (colon > 0 && !text.includes("\n")) return new GitCredential(text.slice(0, colon), text.slice(colon + 1));
    return new GitCredential(env.VC_GIT_USERNAME || TOKEN_USERNAME, text.split("\n")[0]!.trim());
  }
  if (env.VC_GIT_TOKEN) return new GitCredential(env.VC_GIT_USERNAME || TOKEN_USERNAME, env.VC_GIT_TOKEN);
  if (env.VC_GIT_USERNAME && env.VC_GIT_PASSWORD) return new GitCredential(env.VC_GIT_USERNAME, env.VC_GIT_PASSWORD);
  return undefined;
}

/** Removes any `user:password@` from a URL before it is logged or shown. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1***@");
}

/**
 * Moves a URL's `user:password@` out of it: the URL to store and show, and the credential it carried, which is sent
 * in a header and never written to disk (a clone's .git/config keeps only the URL without it).
 */
export function splitUrlCredential(url: string): { url: string; credential?: GitCredential } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url };
  }
  if (!parsed.username && !parsed.password) return { url };
  const username = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  parsed.username = "";
  parsed.password = "";
  return { url: parsed.toString(), credential: new GitCredential(username || TOKEN_USERNAME, password) };
}
