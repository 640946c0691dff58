#!/usr/bin/env node
// Entry point of the metrics proxy deployable: runs the TypeScript sources through tsx.
import { register } from "tsx/esm/api";
register();
await import("../src/metrics-proxy/main.ts");
