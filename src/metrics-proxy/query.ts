// Parses a list request's query (labelSelector, fieldSelector, watch) into a filter over virtual objects; bad input is
// a 400.
import {
  matchesFields,
  matchesRequirements,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
  type FieldRequirement,
  type Requirement,
} from "../kube/selector.js";
import { ApiError, badRequest } from "./status.js";

export interface ListFilter {
  /** True when an object with this virtual namespace, name and labels is selected. */
  matches(namespace: string, name: string, labels: Readonly<Record<string, string>>): boolean;
  /** True when no selector was given. */
  all: boolean;
}

const FIELDS = ["metadata.name", "metadata.namespace"] as const;

/** The filter of a request's labelSelector and fieldSelector. Throws a 400 ApiError on bad syntax. */
export function parseListQuery(params: URLSearchParams): ListFilter {
  if (isTrue(params.get("watch"))) {
    throw new ApiError("MethodNotAllowed", "watch is not supported by the metrics API");
  }
  let labels: Requirement[];
  let fields: FieldRequirement[];
  try {
    labels = parseLabelSelector(params.get("labelSelector"));
  } catch (err) {
    throw badRequest(`unable to parse labelSelector: ${message(err)}`);
  }
  try {
    fields = parseFieldSelector(params.get("fieldSelector"), FIELDS);
  } catch (err) {
    throw badRequest(`unable to parse fieldSelector: ${message(err)}`);
  }
  if (labels.length === 0 && fields.length === 0) return { all: true, matches: () => true };
  return {
    all: false,
    matches(namespace, name, l) {
      if (labels.length > 0 && !matchesRequirements(labels, l)) return false;
      if (fields.length > 0 && !matchesFields(fields, { "metadata.name": name, "metadata.namespace": namespace }))
        return false;
      return true;
    },
  };
}

function isTrue(v: string | null): boolean {
  return v === "1" || v === "true";
}

function message(err: unknown): string {
  return err instanceof SelectorError || err instanceof Error ? err.message : String(err);
}
