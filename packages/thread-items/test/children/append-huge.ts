// Appends one very large item; the parent kills this process while the line is being written.
import { createThreadLog, toolResultItem } from "../../src/index.js";

const [root, megabytes] = process.argv.slice(2) as [string, string];
const log = createThreadLog({ root, jobId: "job-crash", alias: "main" });
const item = toolResultItem({
  id: "huge",
  invocationId: "tu_huge",
  output: "z".repeat(Number(megabytes) * 1024 * 1024),
});
await log.append(item);
console.log("appended");
