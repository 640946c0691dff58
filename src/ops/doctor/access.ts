// The permission questions of vc doctor, answered by the host's authorizer: one SubjectAccessReview per question, for
// the exact identity (a service account with the groups the API server gives it) and verb, instead of guessing from
// RBAC.
import type { Host } from "../host.js";
import { HostError } from "../host.js";
import { isForbidden } from "../visible.js";

/** May `user` (a service account `namespace/name`) `verb` the `resource` of `group`, in `namespace` or cluster-wide. */
export interface AccessQuestion {
  serviceAccount: { namespace: string; name: string };
  verb: string;
  group: string;
  resource: string;
  /** Absent: cluster-wide. */
  namespace?: string;
  /** One object of that name (a Role may grant it by name only); absent: any. */
  name?: string;
}

export interface AccessAnswer extends AccessQuestion {
  allowed: boolean;
  /** The authorizer's reason, when it gave one. */
  reason?: string;
}

const REVIEW_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

/** The user name and groups the API server authenticates a service account's token as. */
function serviceAccountIdentity(sa: { namespace: string; name: string }): { user: string; groups: string[] } {
  return {
    user: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${sa.namespace}`, "system:authenticated"],
  };
}

const keyOf = (q: AccessQuestion) =>
  [
    q.serviceAccount.namespace,
    q.serviceAccount.name,
    q.verb,
    q.group,
    q.resource,
    q.namespace ?? "",
    q.name ?? "",
  ].join("\u0000");

/** The SubjectAccessReview that asks one question. */
function reviewOf(q: AccessQuestion): Record<string, unknown> {
  const { user, groups } = serviceAccountIdentity(q.serviceAccount);
  const resourceAttributes: Record<string, string> = { verb: q.verb, group: q.group, resource: q.resource };
  if (q.namespace !== undefined) resourceAttributes.namespace = q.namespace;
  if (q.name !== undefined) resourceAttributes.name = q.name;
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: { user, groups, resourceAttributes },
  };
}

/** Why the questions could not be asked, said so that "not checked (access): ..." reads well. */
export class AccessUnknown extends Error {}

/**
 * Asks the host each distinct question. Throws AccessUnknown when the caller may not create SubjectAccessReviews (403)
 * or the host does not serve them: the checks that need the answers then say they could not be made.
 */
export async function reviewAccess(
  host: Pick<Host, "create">,
  questions: readonly AccessQuestion[],
): Promise<AccessAnswer[]> {
  const distinct = new Map(questions.map((q) => [keyOf(q), q]));
  const out: AccessAnswer[] = [];
  for (const q of distinct.values()) {
    let status: { allowed?: boolean; reason?: string; evaluationError?: string } | undefined;
    try {
      status = (await host.create<{ status?: typeof status }>(REVIEW_PATH, reviewOf(q))).status;
    } catch (err) {
      if (isForbidden(err))
        throw new AccessUnknown("you may not create SubjectAccessReviews, so the permission checks could not be made");
      if (err instanceof HostError && (err.status === 404 || err.status === 405))
        throw new AccessUnknown("the host serves no SubjectAccessReview, so the permission checks could not be made");
      throw err;
    }
    const reason = status?.reason || status?.evaluationError;
    out.push({ ...q, allowed: status?.allowed === true, ...(reason ? { reason } : {}) });
  }
  return out;
}

/** The answer to a question, or undefined when it was not asked (or could not be). */
function answerTo(answers: readonly AccessAnswer[] | undefined, q: AccessQuestion): AccessAnswer | undefined {
  const key = keyOf(q);
  return answers?.find((a) => keyOf(a) === key);
}

/** Of `verbs`, those the authorizer denied (unasked verbs are not reported: no answer is not a denial). */
export function deniedVerbs(
  answers: readonly AccessAnswer[] | undefined,
  q: Omit<AccessQuestion, "verb">,
  verbs: readonly string[],
): string[] {
  return verbs.filter((verb) => answerTo(answers, { ...q, verb })?.allowed === false);
}
