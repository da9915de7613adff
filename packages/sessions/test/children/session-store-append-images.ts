import { createBlobStore } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";
import { claudeScreenshotSession } from "@stowage/test-support";
import { createObjectSessionStore } from "../../src/session-store/object-session-store.js";
import type { SessionStoreEntry } from "../../src/session-store/types.js";

// A separate process appending a Claude Code session that reads a new screenshot every turn, one
// turn (three lines) a batch, through the object SessionStore with its blobs beside the parts on
// one fs directory: argv = root, sessionId, turns, and optionally a worker name (its entries'
// uuids start with it: workers append the same screenshots as entries of their own) and
// compactAfterParts (default 3: the images the parts held move into the blob store as it goes).
const [root, sessionId, turns, worker, compactAfterParts] = process.argv.slice(2);
const objects = createFsObjectStore({ root: root!, fsync: false });
const store = createObjectSessionStore({
  store: objects,
  blobs: createBlobStore({ store: objects, prefix: "blobs/" }),
  compactAfterParts: Number(compactAfterParts ?? 3),
});
const lines = claudeScreenshotSession({
  turns: Number(turns),
  screenshots: Number(turns),
  width: 320,
  height: 200,
}).map((line) => (worker ? { ...line, uuid: `${worker}-${line.uuid}` } : line)) as SessionStoreEntry[];
for (let start = 0; start < lines.length; start += 3)
  await store.append({ projectKey: "proj", sessionId: sessionId! }, lines.slice(start, start + 3));
