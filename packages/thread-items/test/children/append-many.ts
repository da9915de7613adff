// Appends `count` items to a thread log as fast as it can, alongside a sibling process doing the same.
import { createThreadLog } from "../../src/index.js";
import { appendedItem } from "./appended-items.js";

const [root, writer, count] = process.argv.slice(2) as [string, string, string];
const log = createThreadLog({ root, jobId: "job-shared", alias: "main" });
for (let index = 0; index < Number(count); index++) await log.append(appendedItem(writer, index));
console.log("done");
