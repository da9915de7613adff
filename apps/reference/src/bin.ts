#!/usr/bin/env node
import { runStowageProcess } from "./cli/run-process.js";

// Installed and run as `stowage` / `npx stowage` (or from any npm script, whatever its name): the
// user's directory is this process's. INIT_CWD is never read here: an npm script that `cd`s
// before running stowage means the directory it moved to.
await runStowageProcess(process.cwd());
