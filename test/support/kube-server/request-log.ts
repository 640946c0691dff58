// The request log: one record per HTTP request, with counts by method, verb, resource and path.
import { pathMatches } from "./faults.js";

export interface LoggedRequest {
  method: string;
  path: string;
  query: string;
  /** HTTP status; 0 while in flight or when the connection was reset. */
  status: number;
  user?: string;
  userAgent?: string;
  verb: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface RequestFilter {
  user?: string;
  method?: string;
  verb?: string;
  resource?: string;
  path?: string | RegExp;
}

export class RequestLog {
  readonly requests: LoggedRequest[] = [];

  add(r: LoggedRequest): void {
    this.requests.push(r);
  }

  count(filter: RequestFilter = {}): number {
    return this.requests.filter(
      (r) =>
        (filter.user === undefined || r.user === filter.user) &&
        (filter.method === undefined || r.method === filter.method.toUpperCase()) &&
        (filter.verb === undefined || r.verb === filter.verb) &&
        (filter.resource === undefined ||
          r.resource === filter.resource ||
          (r.subresource !== undefined && `${r.resource}/${r.subresource}` === filter.resource)) &&
        (filter.path === undefined || pathMatches(filter.path, r.path)),
    ).length;
  }

  reset(): void {
    this.requests.length = 0;
  }
}
