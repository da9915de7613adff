import { Agent, run, setTracingDisabled } from "@openai/agents";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createObjectAgentsSession } from "../../src/openai-agents/create-object-agents-session.js";

// One turn of a conversation in a process of its own, its history in an object session on one fs
// directory: argv = root, session id, the user's message. The model is the mock at OPENAI_BASE_URL.
const [root, sessionId, message] = process.argv.slice(2);
setTracingDisabled(true);

const session = createObjectAgentsSession({
  store: createFsObjectStore({ root: root! }),
  sessionId: sessionId!,
});
const agent = new Agent({ name: "assistant", instructions: "Answer briefly.", model: "gpt-5" });
const result = await run(agent, message!, { session, stream: true });
await result.completed;
process.stdout.write(JSON.stringify({ finalOutput: result.finalOutput }));
