// Child process: builds the app's services and HTTP app on a fresh data directory with the
// environment it was given, and prints, as JSON, every module URL resolved on the way.
// argv: <data dir>
import { recordResolvedModules } from "@stowage/test-support";

const stop = recordResolvedModules();
const [dataDir] = process.argv.slice(2) as [string];
const { loadConfig } = await import("../../src/config.js");
const { createServices } = await import("../../src/services.js");
const { createHttpApp } = await import("../../src/http/app.js");
const { createProgram } = await import("../../src/cli/main.js");
const config = await loadConfig({ ...process.env, STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" }, dataDir);
const services = await createServices(config);
createHttpApp(services, { info: () => {}, error: () => {} });
const program = createProgram({
  out: () => {},
  note: () => {},
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: dataDir,
});
if (program.commands.length === 0) throw new Error("the CLI has no commands");
await services.close();
console.log(JSON.stringify(await stop()));
