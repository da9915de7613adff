import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createObjectCheckpointSaver } from "../../src/langgraph/create-object-checkpoint-saver.js";

// A graph that stops for a person's approval, in a process of its own over one fs directory:
// argv = root, thread id, then "start" or "resume <answer>". Prints what invoke returned as JSON.
const [root, threadId, mode, answer] = process.argv.slice(2);

const State = Annotation.Root({
  request: Annotation<string>,
  approval: Annotation<string>,
  shipped: Annotation<boolean>,
  // Every node that finished, in order: a node that ran twice would show twice.
  log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

const graph = new StateGraph(State)
  .addNode("draft", () => ({ log: ["draft"] }))
  .addNode("review", (state) => ({
    approval: interrupt({ question: "ship it?", request: state.request }),
    log: ["review"],
  }))
  .addNode("ship", (state) => ({ shipped: state.approval === "yes", log: ["ship"] }))
  .addEdge(START, "draft")
  .addEdge("draft", "review")
  .addEdge("review", "ship")
  .addEdge("ship", END)
  .compile({ checkpointer: createObjectCheckpointSaver({ store: createFsObjectStore({ root: root! }) }) });

const config = { configurable: { thread_id: threadId! } };
const result =
  mode === "start"
    ? await graph.invoke({ request: "deploy v2" }, config)
    : await graph.invoke(new Command({ resume: answer }), config);
process.stdout.write(JSON.stringify(result));
