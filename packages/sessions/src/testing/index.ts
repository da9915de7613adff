export { HOSTILE_IDS } from "./hostile-ids.js";
export {
  type RealisticSessionOptions,
  realisticSessionTree,
  type SessionTreeFiles,
} from "./realistic-session.js";
export { seededBase64, seededRandom, seededUuid } from "./seeded-random.js";
export {
  describeSessionBlobRepositoryConformance,
  type SessionBlobRepositoryConformanceOptions,
} from "./session-blob-repository-conformance.js";
export { writeSessionTree } from "./write-session-tree.js";
