// Awaits one syncFileSystem with nothing else to keep the process alive, then prints its answer:
// the awaited answer must hold the process open (the idle helper never does).
import { syncFileSystem } from "../../src/journal/sync-file-system.js";

const [path] = process.argv.slice(2) as [string];
console.log(JSON.stringify(await syncFileSystem(path)));
