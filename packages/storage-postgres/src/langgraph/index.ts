// `@stowage/storage-postgres/langgraph`: a LangGraph.js checkpoint saver on this package's tables.
// Needs `@stowage/sessions` and `@langchain/langgraph-checkpoint` installed (optional peers of this
// package); the LangGraph library is loaded on the saver's first use.

export { type ScanCheckpointTablesOptions, scanCheckpointTablesForBlobRefs } from "./checkpoint-blob-refs.js";
export { createPostgresCheckpointSaver, type PostgresCheckpointSaverOptions } from "./checkpoint-saver.js";
