// isomorphic-git's Node HTTP client with a timeout on lack of progress: a slow link that still sends is waited for.
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { GitHttpRequest, GitHttpResponse, HttpClient } from "isomorphic-git";
import http from "isomorphic-git/http/node";

/**
 * Connections of git requests: one per request (a fetch makes two; none is reused after a server closed it idle),
 * without the 5 s socket timeout of Node's global agent, which closes a connection whose answer pauses for 5 s and
 * reports ECONNRESET ("aborted") though the server reset nothing; the idle timeout below decides instead.
 */
const AGENTS = { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) };

/** How long a git request may go without receiving a byte (headers or body) before it is given up. */
export const DEFAULT_GIT_IDLE_MS = 60_000;

/** A git request given up because the server sent nothing for the idle timeout; the connection was closed. */
export class GitStalledError extends Error {
  readonly code = "EGITSTALLED";
  constructor(readonly idleMs: number) {
    super(
      `the server sent nothing for ${formatMs(idleMs)} (the link stalled; a slow link that still sends is waited ` +
        "for); the request was given up",
    );
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** An HttpClient that also keeps the last stall: isomorphic-git reads a failed body as its end, so callers ask. */
export interface ProgressTimedHttp extends HttpClient {
  /** The last request given up for lack of progress since this was last cleared. */
  stalled?: GitStalledError;
}

/**
 * An HttpClient whose requests fail with GitStalledError once `idleMs` pass without a byte from the server: waiting
 * for the answer's headers and between pieces of its body. There is no limit on a request's total time.
 */
export function progressTimedHttp(idleMs: number = DEFAULT_GIT_IDLE_MS): ProgressTimedHttp {
  const client: ProgressTimedHttp = {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      let fail: (err: Error) => void = () => undefined;
      const stalled = new Promise<never>((_, reject) => {
        fail = reject;
      });
      stalled.catch(() => undefined);
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          const err = new GitStalledError(idleMs);
          client.stalled = err;
          fail(err);
          abort.abort(err);
        }, idleMs);
      };
      const disarm = (): void => clearTimeout(timer);
      arm();
      let res: GitHttpResponse;
      try {
        const agent = req.agent ?? (req.url.startsWith("https:") ? AGENTS.https : AGENTS.http);
        res = await Promise.race([http.request({ ...req, agent, signal: abort.signal }), stalled]);
      } catch (err) {
        disarm();
        throw abort.signal.aborted && abort.signal.reason instanceof GitStalledError ? abort.signal.reason : err;
      }
      if (!res.body) {
        disarm();
        return res;
      }
      arm();
      return { ...res, body: watched(res.body, stalled, arm, disarm) };
    },
  };
  return client;
}

/** The body's pieces, each one re-arming the idle timer; a stall rejects the read that waits for the next piece. */
async function* watched(
  body: AsyncIterableIterator<Uint8Array>,
  stalled: Promise<never>,
  arm: () => void,
  disarm: () => void,
): AsyncIterableIterator<Uint8Array> {
  const it = body[Symbol.asyncIterator]();
  try {
    while (true) {
      const next = await Promise.race([it.next(), stalled]);
      if (next.done) return;
      arm();
      yield next.value;
    }
  } finally {
    disarm();
    await it.return?.();
  }
}
