// Opens a target from its spec: `kube` (the live host of a kubeconfig context) or `dir:PATH` (hydrated manifests).
import { DirTarget } from "./dir.js";
import { KubeClient, type OpenClientOptions } from "../host/client.js";
import { KubeTarget } from "./kube/target.js";
import type { Target } from "./types.js";

/** A target spec that is neither `kube` nor `dir:PATH`. */
export class TargetSpecError extends Error {}

export async function openTarget(spec: string, opts: OpenClientOptions = {}): Promise<Target> {
  if (spec === "kube") return new KubeTarget(KubeClient.open(opts));
  if (spec.startsWith("dir:")) {
    const path = spec.slice(4);
    if (path === "") throw new TargetSpecError('target "dir:" needs a folder: dir:PATH');
    return new DirTarget(path);
  }
  throw new TargetSpecError(`unknown target "${spec}": use kube or dir:PATH`);
}
