import { randomBytes } from "node:crypto";
import * as vitest from "vitest";
import { createPostgresCheckpointSaver } from "../../src/langgraph/checkpoint-saver.js";
import { describeBackends } from "../backends.js";

// LangGraph's published suite declares its tests with vitest's globals.
Object.assign(globalThis, vitest);
const { validate } = await import("@langchain/langgraph-checkpoint-validation");

// The saver on this package's langgraph_* tables: every checkpointer of the suite gets a namespace
// of its own, so the suite's "list every thread" tests see only theirs.
describeBackends("PostgreSQL checkpoint saver", (backend) => {
  validate({
    checkpointerName: `@stowage/storage-postgres/langgraph on ${backend.name}`,
    createCheckpointer: () =>
      createPostgresCheckpointSaver({
        db: backend.connection().db,
        namespace: `langgraph-${randomBytes(6).toString("hex")}`,
      }),
  });
});
