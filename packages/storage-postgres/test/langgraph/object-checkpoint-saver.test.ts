import { randomBytes } from "node:crypto";
import { createObjectCheckpointSaver } from "@stowage/sessions/langgraph";
import * as vitest from "vitest";
import { createPostgresObjectStore } from "../../src/object-store.js";
import { describeBackends } from "../backends.js";

// LangGraph's published suite declares its tests with vitest's globals.
Object.assign(globalThis, vitest);
const { validate } = await import("@langchain/langgraph-checkpoint-validation");

// The ObjectStore saver of @stowage/sessions on this package's objects table: every checkpointer
// of the suite gets a namespace of its own, so the suite's "list every thread" tests see only theirs.
describeBackends("LangGraph checkpoint saver", (backend) => {
  validate({
    checkpointerName: `@stowage/sessions/langgraph on ${backend.name}`,
    createCheckpointer: () =>
      createObjectCheckpointSaver({
        store: createPostgresObjectStore({
          db: backend.connection().db,
          namespace: `langgraph-${randomBytes(6).toString("hex")}`,
        }),
      }),
  });
});
