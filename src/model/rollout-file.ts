// fleet/rollout.yaml as written and as read (pure): its shapes, its defaults, and its settings with every default
// resolved.
import { parseDuration } from "./duration.js";

/** The path of the rollout settings in a fleet repository (read from the newest revision, never pinned). */
export const ROLLOUT_FILE = "fleet/rollout.yaml";

/** A label selector on the labels of a cluster's cluster.yaml (Kubernetes' LabelSelector). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }>;
}

/** One wave of fleet/rollout.yaml as written. */
interface WaveSpec {
  name: string;
  selector?: LabelSelector;
  /** Cumulative share (0-100] of the rollout's clusters reached by the end of this wave. */
  percent?: number;
  /** Overrides the rollout's `pause` after this wave. */
  pause?: string;
  /** Overrides the rollout's `healthGate` for this wave. */
  healthGate?: { timeout: string };
}

/** fleet/rollout.yaml as written (schemas/rollout.schema.json). */
export interface RolloutFile {
  waves: WaveSpec[];
  maxUnavailable?: number | string;
  pause?: string;
  healthGate?: { timeout: string };
  onFailure?: "halt" | "restore";
}

/** A pause between waves: milliseconds, or "manual" (until `vc rollout resume`). */
type Pause = number | "manual";

/** One wave with its defaults resolved. */
export interface Wave {
  name: string;
  selector?: LabelSelector;
  percent?: number;
  pause: Pause;
  /** Milliseconds the wave's moved clusters have to become Healthy. */
  gateTimeoutMs: number;
}

/** fleet/rollout.yaml with every default resolved (model.ts `rolloutSettings`): what the step reads. */
export interface RolloutSettings {
  waves: Wave[];
  /** A number of clusters, or a share of the wave: "25%". */
  maxUnavailable: number | `${number}%`;
  onFailure: "halt" | "restore";
}

/** Defaults of fleet/rollout.yaml (also in the schema). */
const DEFAULT_GATE_TIMEOUT = "10m";
const DEFAULT_PAUSE = "0";

function pauseOf(text: string): Pause {
  return text === "manual" ? "manual" : text === "0" ? 0 : parseDuration(text);
}

/** The settings of a schema-valid fleet/rollout.yaml, every default resolved. */
export function rolloutSettings(file: RolloutFile): RolloutSettings {
  const pause = file.pause ?? DEFAULT_PAUSE;
  const gate = file.healthGate?.timeout ?? DEFAULT_GATE_TIMEOUT;
  const waves: Wave[] = file.waves.map((w) => ({
    name: w.name,
    ...(w.selector ? { selector: w.selector } : {}),
    ...(w.percent !== undefined ? { percent: w.percent } : {}),
    pause: pauseOf(w.pause ?? pause),
    gateTimeoutMs: parseDuration(w.healthGate?.timeout ?? gate),
  }));
  const mu = file.maxUnavailable ?? 1;
  return { waves, maxUnavailable: mu as RolloutSettings["maxUnavailable"], onFailure: file.onFailure ?? "halt" };
}
