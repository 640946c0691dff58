// The naming contract shared by rendering and the metrics proxy.
export * from "./keys.js";
export * from "./names.js";
export * from "./metrics-proxy.js";
