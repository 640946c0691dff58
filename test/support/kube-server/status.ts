// Kubernetes Status objects and the ApiError that carries one through the handlers.

export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure" | "Success";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly reason: string = REASONS[code] ?? "Unknown",
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): Status {
    const s: Status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) s.details = this.details;
    return s;
  }
}

/** `<plural>.<group>` as the API server names a resource in messages ("configmaps", "deployments.apps"). */
export function qualified(plural: string, group: string): string {
  return group ? `${plural}.${group}` : plural;
}

export function notFound(plural: string, group: string, name: string): ApiError {
  return new ApiError(404, `${qualified(plural, group)} "${name}" not found`, "NotFound", {
    name,
    group: group || undefined,
    kind: plural,
  });
}

export function alreadyExists(plural: string, group: string, name: string): ApiError {
  return new ApiError(409, `${qualified(plural, group)} "${name}" already exists`, "AlreadyExists", {
    name,
    group: group || undefined,
    kind: plural,
  });
}

export function conflict(plural: string, group: string, name: string, why: string): ApiError {
  return new ApiError(
    409,
    `Operation cannot be fulfilled on ${qualified(plural, group)} "${name}": ${why}`,
    "Conflict",
    { name, group: group || undefined, kind: plural },
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, message, "BadRequest");
}

/** 422 Invalid with field causes, worded like the API server: `Kind "name" is invalid: field: Invalid value: ...`. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const text = causes.map((c) => `${c.field ? `${c.field}: ` : ""}${c.message}`);
  const summary = text.length === 1 ? text[0] : `[${text.join(", ")}]`;
  return new ApiError(422, `${kind} "${name}" is invalid: ${summary}`, "Invalid", {
    name,
    group: group || undefined,
    kind,
    causes,
  });
}

export function successStatus(details: StatusDetails): Record<string, unknown> {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details };
}
