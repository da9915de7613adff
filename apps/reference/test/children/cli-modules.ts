// Child process: runs `stowage <argv>` with the bin's own runner and writes, as JSON, every module
// URL resolved on the way to the file named by $MODULES_OUT.
// argv: the CLI's arguments
import { writeFile } from "node:fs/promises";
import { recordResolvedModules } from "@stowage/test-support";

const stop = recordResolvedModules();
const { runStowageProcess } = await import("../../src/cli/run-process.js");
await runStowageProcess(process.cwd());
await writeFile(process.env.MODULES_OUT!, JSON.stringify(await stop()));
