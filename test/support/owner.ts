// The ownerReference a StatefulSet's controller puts on the pods it creates: tests that play the controller use it.
import type { KubeClient } from "../../src/host/client.js";

/**
 * The controller reference of StatefulSet `namespace/name` (read for its UID), as the StatefulSet controller sets it.
 */
export async function controlledBy(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<{
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: true;
  blockOwnerDeletion: true;
}> {
  const sts = await client.get({ apiVersion: "apps/v1", kind: "StatefulSet", namespace, name });
  if (!sts?.metadata.uid) throw new Error(`StatefulSet ${namespace}/${name} not found`);
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    name,
    uid: sts.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}
