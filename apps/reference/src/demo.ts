// The demo on embedded defaults (no server): a session entry with a screenshot is prepared for
// its JSONL line, which moves the image into the file-system blob store, then loaded back.
import { join, resolve } from "node:path";
import {
  collectGarbage,
  createBlobStore,
  prepareEntryForPersistence,
  resolveBlobRefs,
} from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";

// pnpm runs scripts inside the package; INIT_CWD is where the user typed the command.
const dataDir = resolve(process.env.INIT_CWD ?? process.cwd(), process.env.STOWAGE_DATA_DIR ?? ".stowage");
const blobs = createBlobStore({
  store: createFsObjectStore({ root: join(dataDir, "blobs") }),
  layout: "sharded",
});

// A 1x1 PNG repeated into a 48 KB payload stands in for a screenshot.
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const screenshot = Buffer.concat(Array.from({ length: 700 }, () => png)).toString("base64");
const entry = {
  type: "message",
  id: "demo-1",
  message: {
    role: "user",
    content: [
      { type: "text", text: "Here is the failing page" },
      { type: "image", mimeType: "image/png", data: screenshot },
    ],
  },
};

const line = JSON.stringify(await prepareEntryForPersistence(entry, { blobs }));
console.log(
  `session entry: ${JSON.stringify(entry).length} bytes inline -> ${line.length} bytes in the JSONL line`,
);
console.log(`image stored as ${JSON.parse(line).message.content[1].data}`);

const [loaded] = await resolveBlobRefs([JSON.parse(line)], { blobs });
const same = JSON.stringify(loaded) === JSON.stringify(entry);
console.log(`loaded back: ${same ? "identical to the original entry" : "DIFFERENT from the original entry"}`);

const report = await collectGarbage({
  blobs,
  roots: [JSON.parse(line).message.content[1].data],
  dryRun: true,
});
console.log(`garbage collection (dry run): ${report.scanned} blob(s), ${report.referenced} referenced`);
console.log(`data directory: ${dataDir}`);
if (!same) process.exitCode = 1;
