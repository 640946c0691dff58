// Runs a suite once per in-memory server profile ("1.20" and "current"), so that host-facing behaviour is checked
// against the oldest and the newest Kubernetes vc supports on every run of the unit tier.
import { PROFILES, type Profile } from "./kube-server/index.js";

/** `describe(title [Kubernetes <profile>])` for each profile; `body` starts its servers with `{ profile }`. */
export function describeProfiles(title: string, body: (profile: Profile) => void): void {
  for (const profile of PROFILES) describe(`${title} [Kubernetes ${profile}]`, () => body(profile));
}
