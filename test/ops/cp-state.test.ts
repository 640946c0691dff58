// The control-plane state shown by vc list and vc describe, as a pure function of host objects.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { controlPlaneState } from "../../src/ops/cp-state.js";

const sts = (replicas: number): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "a", namespace: "n" },
  spec: { replicas },
});
const pod = (phase: string, ready = true): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "a-0" },
  status: { phase, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});
const cm = (suspendedBy?: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "vc-status", annotations: suspendedBy ? { "vc.orch.io/suspended-by": suspendedBy } : {} },
});

describe("ops/cp-state", () => {
  it("tells running, pending, scaled down, absent", () => {
    expect(controlPlaneState(sts(1), [pod("Running")], undefined, undefined)).to.deep.equal({
      state: "running",
      desired: 1,
      ready: 1,
    });
    expect(controlPlaneState(sts(1), [pod("Running", false)], undefined, undefined).state).to.equal("pending");
    expect(controlPlaneState(sts(1), [pod("Pending")], undefined, undefined).state).to.equal("pending");
    expect(controlPlaneState(sts(2), [pod("Running")], undefined, undefined).state).to.equal("pending");
    expect(controlPlaneState(sts(0), [], undefined, undefined).state).to.equal("scaled down");
    expect(controlPlaneState(undefined, [], undefined, undefined)).to.deep.equal({
      state: "absent",
      desired: 0,
      ready: 0,
    });
  });
  it(
    "says restoring while a restore pod runs or a restore suspended reconciliation, not after the pod " + "finished",
    () => {
      expect(controlPlaneState(sts(0), [], pod("Running"), undefined).state).to.equal("restoring");
      expect(controlPlaneState(sts(0), [], undefined, cm("vc restore from r/x@sha256:1 at t")).state).to.equal(
        "restoring",
      );
      expect(controlPlaneState(sts(1), [pod("Running")], pod("Succeeded"), cm()).state).to.equal("running");
      expect(controlPlaneState(sts(0), [], pod("Failed"), cm("maintenance by alice")).state).to.equal("scaled down");
    },
  );
});
