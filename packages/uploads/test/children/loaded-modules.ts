// Child process: imports one module and prints, as JSON, every module URL resolved on the way.
// argv: <specifier>
import { recordResolvedModules } from "@stowage/test-support";

const [specifier] = process.argv.slice(2) as [string];
const stop = recordResolvedModules();
await import(specifier);
console.log(JSON.stringify(await stop()));
