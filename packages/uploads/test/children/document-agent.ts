// Child process: an agent written against the design document, word for word: only its
// environment variables (CONTINUE_API_BASE, CONTINUE_API_KEY, AGENT_SESSION_ID) and its calls.
// argv: <file> <more files...>; prints the results as JSON.
import { uploadArtifact, uploadArtifacts } from "@stowage/uploads/agent";

const [first, ...rest] = process.argv.slice(2) as [string, ...string[]];

const result = await uploadArtifact({
  agentSessionId: process.env.AGENT_SESSION_ID,
  filePath: first,
  accessToken: process.env.CONTINUE_API_KEY,
});

const results = await uploadArtifacts(process.env.AGENT_SESSION_ID, rest, process.env.CONTINUE_API_KEY);

console.log(JSON.stringify({ result, results }));
