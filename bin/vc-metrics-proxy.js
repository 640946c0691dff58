#!/usr/bin/env node
// Entry point of the metrics proxy deployable (the bundle from `npm run build` when fresh, else the sources via tsx).
import { launch } from "./launch.js";
await launch("vc-metrics-proxy", "src/metrics-proxy/main.ts");
