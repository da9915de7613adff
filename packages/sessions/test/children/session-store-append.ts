import { createFsObjectStore } from "@stowage/storage-fs";
import { createObjectSessionStore } from "../../src/session-store/object-session-store.js";

// A separate process appending to the same session as its siblings through the object
// SessionStore on one fs directory: argv = root, sessionId, worker id, batches, entries per batch,
// compactAfterParts.
const [root, sessionId, worker, batches, perBatch, compactAfterParts] = process.argv.slice(2);
const store = createObjectSessionStore({
  store: createFsObjectStore({ root: root! }),
  compactAfterParts: Number(compactAfterParts),
});
let n = 0;
for (let batch = 0; batch < Number(batches); batch++) {
  const entries = Array.from({ length: Number(perBatch) }, () => {
    n++;
    return { type: "user", uuid: `w${worker}-${String(n).padStart(6, "0")}`, worker: Number(worker), n };
  });
  await store.append({ projectKey: "proj", sessionId: sessionId! }, entries);
}
