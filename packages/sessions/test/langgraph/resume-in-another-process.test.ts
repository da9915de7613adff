import { randomUUID } from "node:crypto";
import { runChild, tempDirectory } from "@stowage/test-support";
import { expect, it } from "vitest";

const child = new URL("../children/langgraph-review-graph.ts", import.meta.url);

it("a graph stopped at an interrupt in one process is resumed and finished by another", async () => {
  const root = await tempDirectory("stowage-langgraph-resume-");
  const threadId = randomUUID();

  const started = await runChild(child, [root, threadId, "start"]);
  expect(started, started.stderr).toMatchObject({ code: 0 });
  const stopped = JSON.parse(started.stdout);
  // LangGraph's own shape of a run stopped by interrupt(): the state so far and what it asks.
  expect(stopped.log).toEqual(["draft"]);
  expect(stopped.__interrupt__).toMatchObject([{ value: { question: "ship it?", request: "deploy v2" } }]);

  const resumed = await runChild(child, [root, threadId, "resume", "yes"]);
  expect(resumed, resumed.stderr).toMatchObject({ code: 0 });
  expect(JSON.parse(resumed.stdout)).toEqual({
    request: "deploy v2",
    approval: "yes",
    shipped: true,
    log: ["draft", "review", "ship"],
  });
}, 60_000);
