// The design document's client API (`uploadArtifact`, `uploadArtifacts`) and its `UploadArtifact`
// tool, against the upload API on a local 127.0.0.1 server. `artifacts` in keys is the document's
// wire name.
import { mkdir, symlink, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createSdkMcpServer, tool as sdkToolOf } from "@anthropic-ai/claude-agent-sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Principal } from "@stowage/core";
import { expectStowageError, type RecordedWarning, recordingLogger } from "@stowage/core/testing";
import { runChild, tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createUploadArtifactTool,
  loadUploadArtifactTool,
  uploadArtifact,
  uploadArtifactSdkTool,
  uploadArtifacts,
} from "../src/agent/index.js";
import { uploadArtifactToolDescription } from "../src/agent/tool-description.js";
import { fetchUploadPolicy } from "../src/agent/upload-policy-source.js";
import { createUploadPolicy } from "../src/index.js";
import { UPLOAD_POLICY_PATH } from "../src/protocol.js";
import { startUploadApi } from "./support/upload-api.js";
import { startFetchServer } from "./support/upload-server.js";

const alice: Principal = { kind: "user", id: "alice" };
const api = await startUploadApi(["user:alice/agent-run-1"]);
const dir = await tempDirectory("stowage-upload-artifact-");
const child = new URL("./children/document-agent.ts", import.meta.url);

/** The listing of alice's session, straight from the service. */
const listed = async () =>
  (await api.uploads.listUploads(alice, "agent-run-1")).map((upload) => upload.filename);

describe("the design document's client API", () => {
  let key: string;
  const env = () => ({ CONTINUE_API_BASE: api.url, CONTINUE_API_KEY: key, AGENT_SESSION_ID: "agent-run-1" });

  beforeAll(async () => {
    key = await api.keyOf(alice);
    await writeFile(join(dir, "screenshot.png"), new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    await writeFile(join(dir, "screenshot2.png"), new Uint8Array([1, 2, 3]));
    await writeFile(join(dir, "debug.log"), "starting\nstopped\n");
  });

  it("an agent using only the document's variables and calls uploads its files", async () => {
    // Nothing of Stowage's own in the child's environment: only what Continue's devbox provides.
    const { STOWAGE_API_URL: _url, STOWAGE_API_KEY: _key, ...parent } = process.env;
    const run = await runChild(
      child,
      [
        join(dir, "screenshot.png"),
        join(dir, "screenshot2.png"),
        join(dir, "missing.png"),
        join(dir, "debug.log"),
      ],
      { env: { ...parent, ...env() } },
    );
    expect(run.code, run.stderr).toBe(0);
    const { result, results } = JSON.parse(run.stdout) as {
      result: { success: boolean; filename: string };
      results: { success: boolean; filename: string; error?: string }[];
    };
    expect(result).toMatchObject({ success: true, filename: "screenshot.png" });
    expect(results.map(({ filename, success }) => [filename, success])).toEqual([
      ["screenshot2.png", true],
      ["missing.png", false],
      ["debug.log", true],
    ]);
    expect(results[1]!.error).toEqual(expect.any(String));
    expect(await listed()).toEqual(["debug.log", "screenshot.png", "screenshot2.png"]);
  });

  it("prefers Stowage's variables over the document's aliases", async () => {
    const result = await uploadArtifact({
      filePath: join(dir, "debug.log"),
      env: { ...env(), CONTINUE_API_BASE: "http://127.0.0.1:1/", STOWAGE_API_URL: api.url },
    });
    expect(result).toMatchObject({ success: true, filename: "debug.log" });
    const explicit = await uploadArtifact({
      filePath: join(dir, "debug.log"),
      agentSessionId: "agent-run-1",
      accessToken: key,
      apiBase: api.url,
      env: {},
    });
    expect(explicit).toMatchObject({ success: true });
  });

  it("reports missing or malformed settings as results, never throwing", async () => {
    const filePath = join(dir, "debug.log");
    const cases: [Record<string, string>, string, string][] = [
      [{ CONTINUE_API_KEY: "k", AGENT_SESSION_ID: "s" }, "INVALID_INPUT", "MISSING_SETTING"],
      [{ CONTINUE_API_BASE: api.url, AGENT_SESSION_ID: "s" }, "INVALID_INPUT", "MISSING_SETTING"],
      [{ CONTINUE_API_BASE: api.url, CONTINUE_API_KEY: "k" }, "INVALID_INPUT", "MISSING_SETTING"],
      [
        { STOWAGE_API_URL: "ftp://x", CONTINUE_API_KEY: "k", AGENT_SESSION_ID: "s" },
        "INVALID_INPUT",
        "INVALID_SETTING",
      ],
      [
        { CONTINUE_API_BASE: "   ", CONTINUE_API_KEY: "k", AGENT_SESSION_ID: "s" },
        "INVALID_INPUT",
        "MISSING_SETTING",
      ],
    ];
    for (const [variables, code, reason] of cases) {
      const result = await uploadArtifact({ filePath, env: variables });
      expect({ variables, ...result }).toMatchObject({
        success: false,
        filename: "debug.log",
        code,
        reason,
        attempts: 0,
      });
    }
    const refused = await uploadArtifact({ filePath, env: { ...env(), CONTINUE_API_KEY: "stw_not_a_key" } });
    expect(refused).toMatchObject({ success: false, code: "UNAUTHORIZED", attempts: 1 });
    expect(await uploadArtifacts("agent-run-1", "x" as never, key)).toMatchObject([{ success: false }]);
    expect(await uploadArtifacts("agent-run-1", [], key)).toEqual([]);
  });
});

/** The tool's description as the design document gives it, word for word. */
const DOCUMENT_DESCRIPTION =
  "Upload a file (screenshot, video, log) to the session artifacts for user review. Supported formats: images (png, jpg, jpeg, gif, webp), videos (mp4, mov, avi, webm), and text files (log, txt, json, xml, csv, html). Maximum file size: 50MB. If an artifact with the same filename already exists, it will be overwritten with the new file.";

describe("the UploadArtifact tool", () => {
  let key: string;

  beforeAll(async () => {
    key = await api.keyOf(alice);
  });

  const toolOptions = () => ({ apiBase: api.url, accessToken: key, agentSessionId: "agent-run-1", env: {} });

  it("is described as the design document describes it, from the default policy", () => {
    const tool = createUploadArtifactTool(toolOptions());
    expect(tool.name).toBe("UploadArtifact");
    expect(tool.description).toBe(DOCUMENT_DESCRIPTION);
    expect(uploadArtifactToolDescription()).toBe(DOCUMENT_DESCRIPTION);
  });

  it("states the live policy's formats and limit", () => {
    const policy = createUploadPolicy({
      allowedTypes: { png: ["image/png"], md: ["text/markdown"], pdf: ["application/pdf"] },
      maxFileSizeBytes: 10 * 1024 * 1024,
    });
    expect(createUploadArtifactTool({ ...toolOptions(), policy }).description).toBe(
      "Upload a file (screenshot, video, log) to the session artifacts for user review. Supported formats: images (png), text files (md), and other files (pdf). Maximum file size: 10MB. If an artifact with the same filename already exists, it will be overwritten with the new file.",
    );
    const small = createUploadPolicy({
      allowedTypes: { mp4: ["video/mp4"], webm: ["video/webm"] },
      maxFileSizeBytes: 1536 * 1024,
    });
    expect(uploadArtifactToolDescription(small)).toContain(
      "Supported formats: videos (mp4, webm). Maximum file size: 1.5 MiB.",
    );
    const two = createUploadPolicy({ allowedTypes: { gif: ["image/gif"], csv: ["text/csv"] } });
    expect(uploadArtifactToolDescription(two)).toContain(
      "Supported formats: images (gif) and text files (csv).",
    );
  });

  it("takes one parameter, filePath, as a plain JSON schema (an MCP tools/list entry)", () => {
    const { name, description, inputSchema } = createUploadArtifactTool(toolOptions());
    expect(JSON.parse(JSON.stringify({ name, description, inputSchema }))).toEqual({
      name: "UploadArtifact",
      description: DOCUMENT_DESCRIPTION,
      inputSchema: {
        type: "object",
        properties: { filePath: { type: "string", description: expect.any(String) } },
        required: ["filePath"],
        additionalProperties: false,
      },
    });
  });

  it("uploads and answers with a success message", async () => {
    await writeFile(join(dir, "result.json"), '{"ok":true}');
    const output = await createUploadArtifactTool(toolOptions()).run({ filePath: join(dir, "result.json") });
    expect(output).toMatchObject({
      isError: false,
      result: { success: true, filename: "result.json", size: 11 },
    });
    expect(output.text).toContain("result.json");
    expect(await listed()).toContain("result.json");
  });

  it("answers every failure with a detailed error, never throwing", async () => {
    await writeFile(join(dir, "tool.exe"), "MZ");
    const tool = createUploadArtifactTool(toolOptions());
    const refused = await tool.run({ filePath: join(dir, "tool.exe") });
    expect(refused).toMatchObject({
      isError: true,
      result: { success: false, code: "INVALID_INPUT", reason: "FILE_TYPE_NOT_ALLOWED" },
    });
    expect(refused.text).toContain("tool.exe");
    expect(refused.text).toContain("FILE_TYPE_NOT_ALLOWED");
    for (const input of [
      null,
      undefined,
      "x.png",
      {},
      { filePath: 42 },
      { filePath: "" },
      { path: "/tmp/x.png" },
    ]) {
      const output = await tool.run(input);
      expect({ input, isError: output.isError, code: output.result.code }).toEqual({
        input,
        isError: true,
        code: "INVALID_INPUT",
      });
    }
    const elsewhere = createUploadArtifactTool({ ...toolOptions(), agentSessionId: "someone-elses" });
    expect((await elsewhere.run({ filePath: join(dir, "result.json") })).result).toMatchObject({
      code: "NOT_FOUND",
      reason: "SESSION_NOT_FOUND",
    });
  });

  it("answers MCP tools/call with text content", async () => {
    const tool = createUploadArtifactTool(toolOptions());
    const ok = await tool.callMcp({ filePath: join(dir, "result.json") });
    expect(ok).toEqual({
      content: [{ type: "text", text: expect.stringContaining("result.json") }],
      isError: false,
    });
    const failed = await tool.callMcp({ filePath: join(dir, "nope.png") });
    expect(failed).toMatchObject({ isError: true, content: [{ type: "text" }] });
  });

  it("is a tool of the real Agent SDK: listed and called through its in-process MCP server", async () => {
    const sdkTool = uploadArtifactSdkTool(z, toolOptions());
    // The SDK's own tool() makes the same shape from the same parts.
    const made = sdkToolOf(sdkTool.name, sdkTool.description, sdkTool.inputSchema, sdkTool.handler);
    expect(Object.keys(sdkTool).sort()).toEqual(
      Object.keys(made)
        .filter((k) => k in sdkTool)
        .sort(),
    );
    const server = createSdkMcpServer({ name: "stowage", version: "1.0.0", tools: [sdkTool] });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.instance.connect(serverSide);
    const client = new Client({ name: "upload-artifact-test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const { tools } = await client.listTools();
      expect(tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))).toEqual(
        [
          {
            name: "UploadArtifact",
            description: DOCUMENT_DESCRIPTION,
            inputSchema: expect.objectContaining({
              type: "object",
              properties: { filePath: { type: "string", description: expect.any(String) } },
              required: ["filePath"],
            }),
          },
        ],
      );
      const ok = await client.callTool({
        name: "UploadArtifact",
        arguments: { filePath: join(dir, "result.json") },
      });
      expect(ok).toMatchObject({
        isError: false,
        content: [{ type: "text", text: expect.stringContaining("result.json") }],
      });
      const missing = await client.callTool({
        name: "UploadArtifact",
        arguments: { filePath: join(dir, "nope.png") },
      });
      expect(missing).toMatchObject({ isError: true, content: [{ type: "text" }] });
    } finally {
      await client.close();
    }
  });

  it("uploads only files inside its root when given one", async () => {
    const root = join(dir, "workspace");
    await mkdir(root, { recursive: true });
    await writeFile(join(root, "notes.txt"), "inside");
    await writeFile(join(dir, "secret.txt"), "outside");
    await symlink(join(dir, "secret.txt"), join(root, "escape.txt"));
    const tool = createUploadArtifactTool({ ...toolOptions(), root });
    expect((await tool.run({ filePath: "notes.txt" })).result).toMatchObject({
      success: true,
      filename: "notes.txt",
    });
    for (const [filePath, reason] of [
      ["../secret.txt", "OUTSIDE_ROOT"],
      [join(dir, "secret.txt"), "OUTSIDE_ROOT"],
      // A link below the root is never followed, wherever it leads.
      ["escape.txt", "SYMLINK_REFUSED"],
    ]) {
      const output = await tool.run({ filePath: filePath! });
      expect({ filePath, ...output.result }).toMatchObject({
        filePath,
        success: false,
        code: "FORBIDDEN",
        reason,
        attempts: 0,
      });
    }
    expect(await listed()).not.toContain("secret.txt");
  });

  it("never throws on inputs or options that cannot be read, and refuses malformed options clearly", async () => {
    const tool = createUploadArtifactTool(toolOptions());
    const getter = Object.defineProperty({}, "filePath", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    const trap = new Proxy(
      {},
      {
        get() {
          throw new Error("trap");
        },
        ownKeys() {
          throw new Error("trap");
        },
      },
    );
    for (const input of [getter, trap]) {
      expect((await tool.run(input)).result).toMatchObject({ success: false, code: "INVALID_INPUT" });
      expect(await tool.callMcp(input)).toMatchObject({ isError: true });
      expect((await tool.run({ filePath: join(dir, "result.json") }, input as never)).result).toMatchObject({
        success: false,
        code: "INVALID_INPUT",
      });
    }
    expect(await uploadArtifact(trap as never)).toMatchObject({ success: false, code: "INVALID_INPUT" });
    expect(await uploadArtifact(getter as never)).toMatchObject({
      success: false,
      code: "INVALID_INPUT",
      filename: "",
    });
    expect(
      await uploadArtifacts("agent-run-1", [join(dir, "result.json")], key, trap as never),
    ).toMatchObject([{ success: false, code: "INVALID_INPUT" }]);
    for (const options of [
      null,
      42,
      "x",
      trap,
      { policy: null },
      { policy: { maxFileSizeBytes: -1 } },
      { env: { ARTIFACT_MAX_FILE_SIZE_MB: "lots" } },
    ]) {
      expectStowageError(() => createUploadArtifactTool(options as never), "INVALID_INPUT");
      await expectStowageError(() => loadUploadArtifactTool(options as never), "INVALID_INPUT");
    }
    // An empty policy is every default.
    expect(createUploadArtifactTool({ ...toolOptions(), policy: {} as never }).description).toBe(
      DOCUMENT_DESCRIPTION,
    );
  });
});

describe("the UploadArtifact tool and the live policy", () => {
  // A server whose limits are not the defaults: 100 MiB a file (the document's default is 50).
  const policy = createUploadPolicy({ maxFileSizeBytes: 100 * 1024 * 1024 });
  let server: Awaited<ReturnType<typeof startUploadApi>>;
  let key: string;

  beforeAll(async () => {
    server = await startUploadApi(["user:alice/agent-run-1"], { policy });
    key = await server.keyOf(alice);
  });

  const options = () => ({ apiBase: server.url, accessToken: key, agentSessionId: "agent-run-1", env: {} });

  it("the server answers GET /agents/artifacts/policy with the policy it enforces", async () => {
    const response = await fetch(new URL(UPLOAD_POLICY_PATH, server.url), {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      allowedTypes: expect.objectContaining({ png: ["image/png"], xml: ["application/xml", "text/xml"] }),
      maxFileSizeBytes: 104_857_600,
      maxTotalSizeBytes: 524_288_000,
      maxFilenameBytes: 255,
    });
    const anonymous = await fetch(new URL(UPLOAD_POLICY_PATH, server.url));
    expect(anonymous.status).toBe(401);
    const posted = await fetch(new URL(UPLOAD_POLICY_PATH, server.url), {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
    });
    expect(posted.status).toBe(400);
    expect(posted.headers.get("allow")).toBe("GET");
    expect(await fetchUploadPolicy({ apiBase: server.url, apiKey: key })).toEqual(policy);
  });

  it("states and checks the server's limit: a 60 MiB file the default would refuse uploads", async () => {
    const big = join(dir, "long-run.log");
    // Sparse: 60 MiB of zeros without writing them.
    await writeFile(big, "");
    await truncate(big, 60 * 1024 * 1024);
    const local = createUploadArtifactTool(options());
    expect(local.policySource).toBe("environment");
    expect((await local.run({ filePath: big })).result).toMatchObject({
      success: false,
      code: "TOO_LARGE",
      attempts: 0,
    });

    const live = await loadUploadArtifactTool(options());
    expect(live.policySource).toBe("server");
    expect(live.description).toContain("Maximum file size: 100MB.");
    const output = await live.run({ filePath: big });
    expect(output.result).toMatchObject({ success: true, size: 60 * 1024 * 1024 });
  });

  it("falls back to the environment's ARTIFACT_MAX_* when the server cannot say, and reports why", async () => {
    const warnings: RecordedWarning[] = [];
    const { logger } = recordingLogger(warnings);
    // A server that predates the policy route.
    const old = await startFetchServer(async () =>
      Response.json(
        { error: "no such upload API route", code: "NOT_FOUND", reason: "NO_SUCH_ROUTE" },
        { status: 404 },
      ),
    );
    const env = { ARTIFACT_MAX_FILE_SIZE_MB: "2" };
    const tool = await loadUploadArtifactTool({ ...options(), apiBase: old.url, env, logger });
    expect(tool.policySource).toBe("environment");
    expect(tool.description).toContain("Maximum file size: 2MB.");
    expect(warnings).toMatchObject([{ details: { code: "NOT_FOUND", reason: "NO_SUCH_ROUTE" } }]);
    const unreachable = await loadUploadArtifactTool({
      ...options(),
      apiBase: "http://127.0.0.1:1/",
      env,
      logger,
    });
    expect(unreachable.policy.maxFileSizeBytes).toBe(2 * 1024 * 1024);
    expect(warnings.at(-1)).toMatchObject({ details: { code: "UNAVAILABLE" } });
    // Without API settings there is nothing to ask; the environment's policy holds.
    const offline = await loadUploadArtifactTool({ env, logger });
    expect(offline.policySource).toBe("environment");
    expect(warnings.at(-1)).toMatchObject({ details: { reason: "MISSING_SETTING" } });
    // The client API checks against the environment's sizes too.
    await writeFile(join(dir, "three.log"), new Uint8Array(3 * 1024 * 1024));
    expect(await uploadArtifact({ ...options(), env, filePath: join(dir, "three.log") })).toMatchObject({
      success: false,
      code: "TOO_LARGE",
      attempts: 0,
    });
  });

  it("a server that answers with something that is not a policy is refused, not half-trusted", async () => {
    const odd = await startFetchServer(async () => Response.json({ maxFileSizeBytes: 1 }));
    await expectStowageError(
      () => fetchUploadPolicy({ apiBase: odd.url, apiKey: key }),
      "INTERNAL",
      "INVALID_UPLOAD_POLICY",
    );
  });
});
