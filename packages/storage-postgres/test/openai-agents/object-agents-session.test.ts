import { randomBytes } from "node:crypto";
import { createObjectAgentsSession } from "@stowage/sessions/openai-agents";
import { describeAgentsSessionConformance } from "@stowage/sessions/testing";
import { createPostgresObjectStore } from "../../src/object-store.js";
import { describeBackends } from "../backends.js";

// The shared OpenAI Agents Session suite of @stowage/sessions/testing on the object Session over
// this package's objects table: create-only puts are conditional inserts here, so the races of
// the suite (pops against adds in other session objects) are the database's.
describeBackends("OpenAI Agents Session", (backend) => {
  const namespace = `agents-${randomBytes(6).toString("hex")}`;
  describeAgentsSessionConformance({
    name: `object Session on ${backend.name}`,
    openSession: (sessionId) =>
      createObjectAgentsSession({
        sessionId,
        store: createPostgresObjectStore({ db: backend.connection().db, namespace }),
      }),
  });
});
