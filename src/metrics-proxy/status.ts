// Kubernetes `Status` error bodies and the error type every proxy module throws to produce one.

export type Reason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "InternalError"
  | "ServiceUnavailable";

const REASON_CODE: Record<Reason, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  InternalError: 500,
  ServiceUnavailable: 503,
};

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
}

/** An error that the server answers as a `Status` body with its code. */
export class ApiError extends Error {
  readonly code: number;
  constructor(
    readonly reason: Reason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.code = REASON_CODE[reason];
  }

  /** The `Status` object of this error. */
  toStatus(): Record<string, unknown> {
    const status: Record<string, unknown> = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
    };
    if (this.details) status.details = this.details;
    status.code = this.code;
    return status;
  }
}

/** The message of the spec for a host metrics API that is down or not registered. */
const METRICS_NOT_AVAILABLE = "metrics not available";

export function notFound(group: string, resource: string, name: string): ApiError {
  const kind = resource;
  return new ApiError("NotFound", `${resource}${group ? `.${group}` : ""} "${name}" not found`, { name, group, kind });
}

export function badRequest(message: string): ApiError {
  return new ApiError("BadRequest", message);
}

export function unavailable(detail: string): ApiError {
  return new ApiError("ServiceUnavailable", `${METRICS_NOT_AVAILABLE}: ${detail}`);
}

export function unauthorized(): ApiError {
  return new ApiError("Unauthorized", "Unauthorized");
}

/** Any thrown value as an ApiError; unknown errors become 500 without leaking internals beyond the message. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError("InternalError", `internal error: ${message}`);
}
