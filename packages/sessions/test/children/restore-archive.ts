import { readFile } from "node:fs/promises";
import { restoreSession, type SessionCodec } from "../../src/index.js";

// Restores the archive stored at argv[2] (raw blob) into argv[6]: a separate process that the
// test kills mid-way. argv = blob path, session id, codec, raw size, config dir, project key.
const [blobPath, sessionId, codec, rawSize, configDir, projectKey] = process.argv.slice(2);
const blob = new Uint8Array(await readFile(blobPath!));
await restoreSession(
  { sessionId: sessionId!, codec: codec as SessionCodec, blob, rawSizeBytes: Number(rawSize) },
  { configDir: configDir!, projectKey: projectKey! },
);
