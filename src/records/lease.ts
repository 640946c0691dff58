// The apply lease on a cluster's record (pure): which run is writing the cluster's objects, renewed while it does.
import { PREFIX } from "../translate/keys.js";

/** Annotation of a record while a run writes the cluster's objects (an apply lease); its JSON says which run. */
export const APPLYING_ANNOTATION = `${PREFIX}/applying`;

/** How long an apply lease lasts without renewal (seconds), as the reconciler's leader Lease. */
export const APPLY_LEASE_SECONDS = 15;
/** How often a held apply lease is renewed. */
export const APPLY_LEASE_RENEW_MS = 5_000;
/** A holder stops writing when its renewal has not succeeded for this long (a frozen or partitioned run). */
export const APPLY_LEASE_RENEW_DEADLINE_MS = 10_000;

/** Which run holds a cluster's record while it writes the cluster's objects. */
export interface ApplyLease {
  /** The run's own id (host, process and a random part): a run knows its leases by it. */
  holder: string;
  /** The machine (host name; a pod's name in a cluster) and process id of the run. */
  host: string;
  pid: number;
  /** What is writing: `vc apply`, `vc adopt`, `vc create`, `the reconciler`. */
  via: string;
  /** The revision being applied, when known. */
  revision?: string;
  /** The leader Lease (`namespace/name`) the holder writes under, with its identity (a reconciler replica). */
  leader?: { lease: string; identity: string };
  /** When the holder last renewed the lease (its own clock; others judge expiry by their own observation). */
  renewTime: string;
  durationSeconds: number;
}

/** The lease as stored in the annotation. */
export function leaseText(lease: ApplyLease): string {
  return JSON.stringify(lease);
}

/** The lease an annotation holds, or undefined when it holds none (or something else). */
export function parseLease(text: string | undefined): ApplyLease | undefined {
  if (!text) return undefined;
  try {
    const l = JSON.parse(text) as Partial<ApplyLease>;
    if (typeof l.holder !== "string" || typeof l.renewTime !== "string") return undefined;
    return {
      holder: l.holder,
      host: typeof l.host === "string" ? l.host : "",
      pid: typeof l.pid === "number" ? l.pid : 0,
      via: typeof l.via === "string" ? l.via : "vc",
      ...(typeof l.revision === "string" ? { revision: l.revision } : {}),
      ...(l.leader && typeof l.leader.lease === "string" && typeof l.leader.identity === "string"
        ? { leader: { lease: l.leader.lease, identity: l.leader.identity } }
        : {}),
      renewTime: l.renewTime,
      durationSeconds:
        typeof l.durationSeconds === "number" && l.durationSeconds > 0 ? l.durationSeconds : APPLY_LEASE_SECONDS,
    };
  } catch {
    return undefined;
  }
}

/** Who holds a lease, for messages: `vc apply of abc123456789 on host ci-7 (pid 42), renewed 2024-...`. */
export function describeLease(lease: ApplyLease): string {
  const what = lease.revision ? `${lease.via} of ${lease.revision.slice(0, 12)}` : lease.via;
  const where = lease.host ? ` on ${lease.host}${lease.pid ? ` (pid ${lease.pid})` : ""}` : "";
  return `${what}${where}, renewed ${lease.renewTime}`;
}
