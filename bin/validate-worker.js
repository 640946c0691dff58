// Entry point of a validation worker thread (the bundle from `npm run build` when fresh, else the sources via tsx).
import { launch } from "./launch.js";
await launch("vc-validate-worker", "src/validate/worker.ts");
