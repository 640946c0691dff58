#!/usr/bin/env node
// Entry point of the `vc` command (the bundle from `npm run build` when fresh, else the sources via tsx).
import { launch } from "./launch.js";
const { main } = await launch("vc", "src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
