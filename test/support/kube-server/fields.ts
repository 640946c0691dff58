// Field selectors per kind, as upstream supports them (metadata.name/namespace everywhere, plus a few per kind).
import type { KubeObject } from "../../../src/kube/object.js";
import {
  labelMatcher,
  matchesFields,
  parseFieldSelector,
  SelectorError,
  type FieldRequirement,
} from "../../../src/kube/selector.js";
import { badRequest } from "./status.js";

const PER_KIND: Record<string, string[]> = {
  Pod: [
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
  ],
  Event: [
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
  ],
  Secret: ["type"],
  Namespace: ["status.phase"],
  Node: ["spec.unschedulable"],
};

function supportedFields(kind: string): string[] {
  return ["metadata.name", "metadata.namespace", ...(PER_KIND[kind] ?? [])];
}

function valueAt(obj: KubeObject, field: string): string {
  if (field === "source") return String(((obj.source ?? {}) as { component?: string }).component ?? "");
  let cur: unknown = obj;
  for (const part of field.split(".")) {
    if (cur === null || typeof cur !== "object") return "";
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null)
    return field === "spec.hostNetwork" || field === "spec.unschedulable" ? "false" : "";
  return String(cur);
}

/** Parses a field selector for a kind; throws SelectorError for syntax errors and unsupported fields. */
function fieldMatcher(kind: string, selector: string | null): (obj: KubeObject) => boolean {
  const reqs: FieldRequirement[] = parseFieldSelector(selector, supportedFields(kind));
  if (reqs.length === 0) return () => true;
  return (obj) => matchesFields(reqs, Object.fromEntries(reqs.map((r) => [r.field, valueAt(obj, r.field)])));
}

export interface QuerySelectors {
  labels: (labels: Record<string, string> | undefined) => boolean;
  fields: (obj: KubeObject) => boolean;
}

/** The label and field selectors of a list or watch request; a bad one is a 400 with the API server's wording. */
export function querySelectors(kind: string, query: URLSearchParams): QuerySelectors {
  try {
    return { labels: labelMatcher(query.get("labelSelector")), fields: fieldMatcher(kind, query.get("fieldSelector")) };
  } catch (err) {
    if (!(err instanceof SelectorError)) throw err;
    const fieldProblem = err.message.startsWith("field label") || err.message.startsWith("invalid field");
    throw badRequest(fieldProblem ? err.message : `unable to parse requirement: ${err.message}`);
  }
}
