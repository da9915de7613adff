// One dispatcher writing `count` versions of a session's hot state on the file system, racing
// other processes doing the same: on CONFLICT it loads the latest version and tries again.
// Every process loads the session before a barrier (a file per writer in `barrier`; all of
// `writers` must be there), so all of them first write version 1 on the same base: all but one
// get CONFLICT whatever the timing. Prints `<wins> <conflicts>` at the end.
import { StowageError } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { countTokensHeuristic } from "@stowage/test-support";
import { createHotStateStore } from "../../src/index.js";
import { passBarrier } from "./barrier.js";

const [root, sessionId, writer, count, barrier, writers] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const { dispatcherFor } = createHotStateStore({
  store: createFsObjectStore({ root }),
  countTokens: countTokensHeuristic,
});
const dispatcher = dispatcherFor(sessionId);
await dispatcher.load();
await passBarrier(barrier, writer, writers);

let conflicts = 0;
for (let step = 0; step < Number(count); ) {
  try {
    await dispatcher.update((state) => ({
      ...(state ?? { session_id: sessionId, objective: "race" }),
      last_successful_step: `${writer}-${step}`,
    }));
    step++;
  } catch (err) {
    if (!StowageError.is(err, "CONFLICT")) throw err;
    conflicts++;
    await dispatcher.load();
  }
}
process.stdout.write(`${count} ${conflicts}\n`);
