// The agent's side of the demo, steps 3 to 7: a long tool output, a screenshot in a session entry,
// a subagent's output and an upload, each through the API the way an agent does it, and checked.
import { randomUUID } from "node:crypto";
import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createOutputSink } from "@stowage/artifacts";
import { type BlobPutResult, prepareEntryForPersistence } from "@stowage/blob-store";
import { textItem, toolCallItem, toolResultItem } from "@stowage/thread-items";
import { uploadFile } from "@stowage/uploads/agent";
import { check, type DemoRun } from "./demo-run.js";

/** Size of the demo's long tool output: big enough to be truncated in its thread item. */
const DEMO_TOOL_OUTPUT_BYTES = 2 * 1024 * 1024;

function longTestOutput(): string {
  const lines: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < DEMO_TOOL_OUTPUT_BYTES; i++) {
    const line = `  ✓ parser › case ${String(i).padStart(6, "0")} parses nested expressions without backtracking (${(i % 97) + 1} ms)`;
    lines.push(line);
    bytes += Buffer.byteLength(line) + 1;
  }
  const passed = lines.length;
  lines.push(
    "  ✗ parser › handles a trailing comma in argument lists",
    "",
    `Tests: 1 failed, ${passed.toLocaleString("en-US")} passed`,
  );
  return `${lines.join("\n")}\n`;
}

/**
 * Steps 3 and 4: the tool's 2 MiB of output streams through an OutputSink (the model keeps the
 * tail, the full output spills to artifact://<id>), its thread item is cut to the budget, and its
 * last lines are read back through artifact:// paging. Resolves with the output.
 */
export async function postLongToolOutput(run: DemoRun): Promise<string> {
  const { api, agentSessionId, thread, post, step } = run;
  await post(toolCallItem({ name: "Bash", invocationId: "call-tests", input: { command: "npm test" } }));
  const output = longTestOutput();
  const sink = createOutputSink({ artifacts: run.session.artifacts, toolType: "bash" });
  let summary: Awaited<ReturnType<typeof sink.dump>>;
  try {
    for (let offset = 0; offset < output.length; offset += 64 * 1024)
      await sink.push(output.slice(offset, offset + 64 * 1024));
    summary = await sink.dump();
  } finally {
    await sink.dispose();
  }
  check(summary.artifactId !== undefined, "the long output was saved as an artifact");
  const result = await post(toolResultItem({ invocationId: "call-tests", output, isError: true }));
  const metadata = result.metadata as { truncated?: boolean; local_log?: string };
  check(metadata.truncated === true, "the 2 MiB tool result was truncated to fit the thread budget");
  step(
    `3. posted thread items to ${thread.jobId}/${thread.alias}; the ${(Buffer.byteLength(output) / 1024 / 1024).toFixed(1)} MiB ` +
      `tool result was cut to ${(Buffer.byteLength(JSON.stringify(result)) / 1024).toFixed(0)} KiB (full payload in ${metadata.local_log}), ` +
      `and the tool output is artifact://${summary.artifactId} (${summary.totalLines} lines)`,
  );
  const tail = await api.get<{ text: string }>(
    `/sessions/${agentSessionId}/artifact/${summary.artifactId}?offset=${summary.totalLines - 2}&limit=3`,
  );
  check(tail.text.includes("Tests: 1 failed"), "artifact:// paging returns the last lines");
  await post(
    textItem(
      `The full output is artifact://${summary.artifactId}; its last lines say: ${tail.text.trim().split("\n").at(-1)}`,
    ),
  );
  step(
    `4. read the last lines back through artifact://${summary.artifactId}: "${tail.text.trim().split("\n").at(-1)}"`,
  );
  return output;
}

/** Step 5: a screenshot in a session entry moves to the blob store (over HTTP); the entry keeps its ref. */
export async function externalizeScreenshot(run: DemoRun, screenshot: Buffer): Promise<void> {
  const { api, post } = run;
  const blobs = {
    put: async (bytes: Uint8Array | ReadableStream<Uint8Array>) => {
      check(bytes instanceof Uint8Array, "images arrive as bytes");
      return api.postBytes<BlobPutResult>("/blobs", bytes);
    },
  };
  const entry = {
    type: "message",
    id: randomUUID(),
    message: {
      role: "toolResult",
      toolName: "browser_screenshot",
      content: [{ type: "image", mimeType: "image/png", data: screenshot.toString("base64") }],
    },
  };
  const persisted = await prepareEntryForPersistence(entry, { blobs });
  const ref = (persisted.message.content[0] as { data: string }).data;
  await appendFile(run.session.sessionFile, `${JSON.stringify(persisted)}\n`);
  await post(
    toolCallItem({
      name: "browser_screenshot",
      invocationId: "call-shot",
      input: { url: "http://localhost:5173/" },
    }),
  );
  await post(toolResultItem({ invocationId: "call-shot", output: `Screenshot of the failing page: ${ref}` }));
  run.step(`5. externalized a ${screenshot.byteLength}-byte screenshot from the session entry to ${ref}`);
}

/** Step 6: a subagent's output, read back by query through agent://. */
export async function readSubagentOutput(run: DemoRun): Promise<void> {
  const { api, agentSessionId, post, session } = run;
  const explore = await session.artifacts.allocateAgentOutput("Explore");
  await session.artifacts.writeAgentOutput(
    explore.outputId,
    JSON.stringify(
      {
        summary: "argument lists are parsed in parseArguments()",
        findings: [{ file: "src/parser.ts", line: 212 }],
      },
      null,
      2,
    ),
  );
  await post(
    toolCallItem({
      name: "Task",
      invocationId: "call-explore",
      input: { description: "Explore the parser", subagent_type: "Explore" },
    }),
  );
  await post(toolResultItem({ invocationId: "call-explore", output: `agent://${explore.outputId}` }));
  const finding = await api.get<{ text: string }>(
    `/sessions/${agentSessionId}/agent/${explore.outputId}?q=.findings[0].file`,
  );
  check(finding.text.includes("src/parser.ts"), "agent:// query extraction");
  run.step(
    `6. read the subagent's finding through agent://${explore.outputId}?q=.findings[0].file → ${finding.text.trim()}`,
  );
}

/** Step 7: an upload through a signed URL, the way an agent in a remote devbox does it. */
export async function uploadScreenshot(run: DemoRun, workDir: string, screenshot: Buffer): Promise<void> {
  const { api, agentSessionId } = run;
  const shotPath = join(workDir, "failing-page.png");
  await writeFile(shotPath, screenshot);
  const uploaded = await uploadFile({
    apiBase: run.server.url,
    apiKey: run.apiKey,
    sessionId: agentSessionId,
    filePath: shotPath,
  });
  check(uploaded.success, `upload succeeded (${uploaded.error})`);
  // The documented upload API keeps the design document's words (`/artifacts`, `{ artifacts }`).
  const listed = await api.get<{ artifacts: { filename: string; sizeFormatted: string }[] }>(
    `/agents/${agentSessionId}/artifacts`,
  );
  const download = await api.get<{ url: string }>(
    `/agents/${agentSessionId}/artifacts/failing-page.png/download`,
  );
  const downloaded = Buffer.from(await (await fetch(download.url)).arrayBuffer());
  check(downloaded.equals(screenshot), "the download is the uploaded file");
  run.step(
    `7. uploaded failing-page.png through a signed URL (size, type and SHA-256 bound); the session lists ` +
      `${listed.artifacts.map((a) => `${a.filename} (${a.sizeFormatted})`).join(", ")} and its download URL returns the same bytes`,
  );
}
