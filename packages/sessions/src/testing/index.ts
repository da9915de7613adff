// First: without vitest, the import fails naming this entry (see vitest-peer.ts).
import "./vitest-peer.js";

export {
  type AgentsSessionConformanceOptions,
  type AgentsSessionUnderTest,
  describeAgentsSessionConformance,
} from "./agents-session-conformance.js";
export {
  type RealisticSessionOptions,
  realisticSessionTree,
  realisticTranscriptEntries,
  type SessionTreeFiles,
} from "./realistic-session.js";
export { sampleSessionBlob } from "./sample-session-blob.js";
export { seededUuid } from "./seeded-random.js";
export {
  describeSessionBlobRepositoryConformance,
  type SessionBlobRepositoryConformanceOptions,
} from "./session-blob-repository-conformance.js";
export {
  describeSessionStoreConformance,
  type SessionStoreConformanceOptions,
} from "./session-store-conformance.js";
export { writeSessionTree } from "./write-session-tree.js";
