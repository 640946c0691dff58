// The rollout step (pure): from the record, the settings, the current wave's health and the time, the next record and
// the clusters to move.
import { unavailableBudget } from "./model.js";
import type { RolloutSettings, Wave } from "../model/rollout-file.js";
import type { Move, MovedCluster, Observations, RolloutRecord, RolloutWave, StepResult } from "./types.js";
import { FINAL_PHASES } from "./types.js";

/** The id of a rollout: 12 hex of its target digest. */
const rolloutId = (digest: string): string => digest.slice(0, 12);

export interface Begin {
  source: string;
  to: { digest: string; revision?: string };
  /** The waves planned for the rollout's members (plan.ts). */
  waves: RolloutWave[];
  /** Each member's current pin (its `from`). */
  from: Record<string, string>;
  now: number;
  /** The rollout this one replaces (a new base change while it ran), for the message. */
  replaces?: RolloutRecord;
}

/** A new rollout at its first wave; Completed at once when it moves no cluster. */
export function begin(b: Begin): RolloutRecord {
  const at = new Date(b.now).toISOString();
  const id = rolloutId(b.to.digest);
  const count = b.waves.reduce((n, w) => n + w.clusters.length, 0);
  const replaced =
    b.replaces && !isFinal(b.replaces) ? `; replaces rollout ${b.replaces.id} (${b.replaces.phase})` : "";
  const rec: RolloutRecord = {
    id,
    source: b.source,
    to: b.to,
    phase: count === 0 ? "Completed" : "Progressing",
    wave: 0,
    waves: b.waves,
    from: b.from,
    moved: {},
    started: at,
    since: at,
    message:
      count === 0
        ? `rollout ${id}: no cluster's base layers change${replaced}`
        : `rollout ${id} started: ${count} cluster${count === 1 ? "" : "s"} in ${b.waves.length} ` +
          `wave${b.waves.length === 1 ? "" : "s"}${replaced}`,
  };
  return rec;
}

export const isFinal = (r: RolloutRecord): boolean => FINAL_PHASES.includes(r.phase);

/** The settings of the record's wave `i` (matched by name, else by position; the last wave's when the file lost it). */
function waveSettings(settings: RolloutSettings, record: RolloutRecord, i: number): Wave {
  const name = record.waves[i]?.name;
  return settings.waves.find((w) => w.name === name) ?? settings.waves[Math.min(i, settings.waves.length - 1)]!;
}

/**
 * One step. Order: record the observed health of moved clusters; act on a request (abort, pause, resume; cleared
 * once read); then the phase: Aborting ends, Waiting ends when its pause is over, Progressing checks the wave's gate
 * (a Degraded cluster or the gate's timeout halts; every cluster moved and Healthy passes) and otherwise moves up to
 * maxUnavailable not-yet-Healthy clusters. A passed wave with no pause goes straight on to the next in the same step.
 */
export function step(record: RolloutRecord, settings: RolloutSettings, obs: Observations): StepResult {
  const before = JSON.stringify(record);
  const r: RolloutRecord = structuredClone(record);
  const moves: Move[] = [];
  const now = obs.now;
  const iso = new Date(now).toISOString();
  const enter = (phase: RolloutRecord["phase"], message: string): void => {
    r.phase = phase;
    r.since = iso;
    r.message = message;
  };

  for (const [name, h] of Object.entries(obs.health)) {
    const m = r.moved[name];
    if (!m) continue;
    m.health = h.status;
    if (h.reason !== undefined && h.status !== "Healthy") m.reason = h.reason;
    else delete m.reason;
  }

  const req = r.request;
  delete r.request;
  if (req && !isFinal(r)) {
    if (req.action === "abort" && r.phase !== "Aborting") {
      for (const [name, m] of Object.entries(r.moved).sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (m.at === "to") moves.push({ cluster: name, base: m.from });
        m.at = "back";
      }
      delete r.resumeTo;
      enter(
        "Aborting",
        `aborted by ${req.by}: ${Object.keys(r.moved).length} moved cluster(s) return to their previous base`,
      );
    } else if (req.action === "pause" && (r.phase === "Progressing" || r.phase === "Waiting")) {
      r.resumeTo = r.phase;
      enter("Paused", `paused by ${req.by} in wave ${r.waves[r.wave]?.name}`);
    } else if (req.action === "resume") {
      if (r.phase === "Paused") {
        const to = r.resumeTo ?? "Progressing";
        delete r.resumeTo;
        // Time spent paused does not count against the wave's gate: it starts again.
        if (to === "Progressing" && r.gateSince !== undefined) r.gateSince = iso;
        enter(to, `resumed by ${req.by} in wave ${r.waves[r.wave]?.name}`);
      } else if (r.phase === "Halted") {
        // The failed wave's health is checked again (restored clusters move again) with a fresh gate: what was read
        // before the resume no longer counts (pins.ts observedHealth reads only what came after the gate started).
        r.gateSince = iso;
        for (const name of r.waves[r.wave]?.clusters ?? []) {
          const m = r.moved[name];
          if (m && m.health !== "Healthy") {
            m.health = "Unknown";
            delete m.reason;
          }
        }
        enter("Progressing", `resumed by ${req.by}: wave ${r.waves[r.wave]?.name} is checked again`);
      } else if (r.phase === "Waiting") {
        // Resume ends a pause at once (a manual one waits for it).
        advance(r, settings, iso);
      }
    }
  }

  // An abort ends once every moved cluster was applied back at its previous base: a move back that failed (the server
  // refused a write) keeps it Aborting, and the cluster is reconciled again (pins.ts inFlight).
  const returned = new Set(obs.returned ?? []);
  if (r.phase === "Aborting" && moves.length === 0 && Object.keys(r.moved).every((c) => returned.has(c))) {
    enter(
      "Aborted",
      `rollout ${r.id} aborted: ${Object.keys(r.moved).length} moved cluster(s) are back at their previous base`,
    );
  }
  if (r.phase === "Waiting") {
    const pause = waveSettings(settings, r, r.wave).pause;
    if (pause !== "manual" && now - Date.parse(r.since) >= pause) advance(r, settings, iso);
  }
  // A wave passed with no pause goes straight on, so one step may pass several (empty) waves.
  for (let guard = 0; r.phase === "Progressing" && guard <= r.waves.length; guard++) {
    const outcome = progress(r, settings, now, moves);
    if (outcome === "fail") {
      const wave = r.waves[r.wave]!;
      if (settings.onFailure === "restore") {
        for (const name of wave.clusters) {
          const m = r.moved[name];
          if (m?.at === "to") {
            m.at = "back";
            moves.push({ cluster: name, base: m.from });
          }
        }
      }
      break;
    }
    if (outcome !== "passed") break;
    const pause = waveSettings(settings, r, r.wave).pause;
    if (r.wave >= r.waves.length - 1) {
      enter(
        "Completed",
        `rollout ${r.id} completed: ${Object.keys(r.moved).length} cluster(s) moved in ${r.waves.length} wave(s)`,
      );
    } else if (pause === 0) {
      advance(r, settings, iso);
    } else {
      enter(
        "Waiting",
        `wave ${r.waves[r.wave]!.name} passed its health gate; ` +
          `${pause === "manual" ? "waiting for vc rollout resume" : `next wave in ${Math.ceil(pause / 1000)}s`}`,
      );
    }
  }
  return { record: r, moves, changed: JSON.stringify(r) !== before };
}

/** Next wave, Progressing, its gate not started. */
function advance(r: RolloutRecord, _settings: RolloutSettings, iso: string): void {
  const passed = r.waves[r.wave]?.name;
  r.wave++;
  delete r.gateSince;
  r.phase = "Progressing";
  r.since = iso;
  r.message = `wave ${passed} passed; wave ${r.waves[r.wave]?.name} (${r.wave + 1}/${r.waves.length}) is moving`;
}

/**
 * The current wave in Progressing: "fail" (halted, message set), "passed" (every cluster moved and Healthy), or
 * "moving" (moves added up to maxUnavailable not-yet-Healthy clusters; waiting for health).
 */
function progress(
  r: RolloutRecord,
  settings: RolloutSettings,
  now: number,
  moves: Move[],
): "fail" | "passed" | "moving" {
  const wave = r.waves[r.wave]!;
  const iso = new Date(now).toISOString();
  const movedHere = wave.clusters
    .map((n) => [n, r.moved[n]] as const)
    .filter((p): p is readonly [string, MovedCluster] => p[1]?.at === "to");
  const degraded = movedHere.find(([, m]) => m.health === "Degraded");
  const halt = (why: string): "fail" => {
    r.phase = "Halted";
    r.since = iso;
    r.message = `wave ${wave.name} halted: ${why}`;
    return "fail";
  };
  if (degraded) return halt(`cluster ${degraded[0]} is Degraded${degraded[1].reason ? `: ${degraded[1].reason}` : ""}`);
  if (movedHere.length === wave.clusters.length && movedHere.every(([, m]) => m.health === "Healthy")) return "passed";
  const gate = waveSettings(settings, r, r.wave).gateTimeoutMs;
  if (r.gateSince !== undefined && now - Date.parse(r.gateSince) > gate) {
    const slow = movedHere.find(([, m]) => m.health !== "Healthy");
    const who = slow
      ? `cluster ${slow[0]} is ${slow[1].health}${slow[1].reason ? `: ${slow[1].reason}` : ""}`
      : "not every cluster could be moved";
    return halt(`health gate timed out after ${Math.round(gate / 1000)}s: ${who}`);
  }
  const notHealthy = movedHere.filter(([, m]) => m.health !== "Healthy").length;
  let room = unavailableBudget(settings.maxUnavailable, wave.clusters.length) - notHealthy;
  for (const name of wave.clusters) {
    if (room <= 0) break;
    if (r.moved[name]?.at === "to") continue;
    const from = r.moved[name]?.from ?? r.from[name]!;
    r.moved[name] = { from, at: "to", health: "Unknown", movedAt: iso };
    moves.push({ cluster: name, base: r.to.digest });
    room--;
  }
  r.gateSince ??= iso;
  return "moving";
}
