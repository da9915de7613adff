export { inCi, isRoot } from "./environment.js";
export { filesUnder } from "./files-under.js";
export { type ChildOptions, type ChildResult, runChild, spawnChild } from "./run-child.js";
export { seededRandom } from "./seeded-random.js";
export { tempDirectory } from "./temp-directory.js";
