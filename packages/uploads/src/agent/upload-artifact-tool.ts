import { basename } from "node:path";
import { consoleLogger, type Logger, StowageError } from "@stowage/core";
import { formatSize } from "../format-size.js";
import { createUploadPolicy, type UploadPolicy } from "../upload-policy.js";
import { agentUploadOptionsFromEnv } from "./agent-env.js";
import { readOptions } from "./read-options.js";
import { uploadArtifactToolDescription } from "./tool-description.js";
import { type UploadArtifactOptions, uploadArtifact } from "./upload-artifact.js";
import type { UploadFileResult } from "./upload-file.js";
import { fetchUploadPolicy, localUploadPolicy } from "./upload-policy-source.js";

/** The tool's name, as the design document gives it: what the model calls. */
const UPLOAD_ARTIFACT_TOOL_NAME = "UploadArtifact";

/** The JSON Schema of the tool's one parameter. */
export interface UploadArtifactInputSchema {
  type: "object";
  properties: { filePath: { type: "string"; description: string } };
  required: ["filePath"];
  additionalProperties: false;
}

/** What one call of the tool produced: the text for the model, and the upload's result. */
export interface UploadArtifactToolOutput {
  /** True when the upload failed; `text` then says why, in detail. */
  isError: boolean;
  text: string;
  result: UploadFileResult;
}

/**
 * The result of an MCP `tools/call`, as the MCP specification (and the Agent SDK) shape it. A type
 * alias, not an interface, so that it fits the SDK's result type, which has an index signature.
 */
export type McpCallToolResult = {
  content: { type: "text"; text: string }[];
  isError?: boolean;
};

/**
 * The `UploadArtifact` tool. `name`, `description` and `inputSchema` are a plain JSON-schema tool
 * definition, exactly the shape of an MCP `tools/list` entry; `run` and `callMcp` execute it.
 */
export interface UploadArtifactTool {
  readonly name: "UploadArtifact";
  readonly description: string;
  readonly inputSchema: UploadArtifactInputSchema;
  /** The policy the description states and the handler checks files against before any request. */
  readonly policy: UploadPolicy;
  /**
   * Where {@link policy} came from: the caller's `policy` option, the server
   * ({@link loadUploadArtifactTool}), or the environment (`ARTIFACT_MAX_*_SIZE_MB` over the defaults).
   */
  readonly policySource: "options" | "server" | "environment";
  /** Validates the input and the file, uploads it (two steps, then completion). Never throws. */
  run(input: unknown, options?: { signal?: AbortSignal }): Promise<UploadArtifactToolOutput>;
  /** {@link run}, answered as an MCP `tools/call` result. Never throws. */
  callMcp(input: unknown, options?: { signal?: AbortSignal }): Promise<McpCallToolResult>;
}

/**
 * Options of {@link createUploadArtifactTool}: where and how uploads go (defaults from the
 * environment), `root` (the only directory files are uploaded from; give it, since the model
 * chooses the path) and `policy`.
 */
export type UploadArtifactToolOptions = Omit<UploadArtifactOptions, "filePath">;

/** Options of {@link loadUploadArtifactTool}. */
export interface LoadUploadArtifactToolOptions extends UploadArtifactToolOptions {
  /** Where a failed policy request is reported; default `consoleLogger`. */
  logger?: Logger;
}

/** The message the model reads after a call. */
function messageOf(filePath: string, result: UploadFileResult): string {
  if (result.success) {
    const size = result.size === undefined ? "" : ` (${formatSize(result.size)})`;
    return `Uploaded ${result.filename}${size} to the session artifacts.`;
  }
  const why = [result.code, result.reason].filter(Boolean).join(", ");
  return `Failed to upload ${result.filename || filePath || "the file"}: ${result.error ?? "unknown error"}${why ? ` (${why})` : ""}`;
}

function inputFailure(error: string): UploadArtifactToolOutput {
  const result: UploadFileResult = {
    success: false,
    filename: "",
    error,
    code: "INVALID_INPUT",
    attempts: 0,
    requests: 0,
  };
  return { isError: true, text: `Failed to upload: ${error}`, result };
}

/** The tool over checked options and a policy: the one place its definition and handler are built. */
function buildTool(
  options: UploadArtifactToolOptions,
  policy: UploadPolicy,
  policySource: UploadArtifactTool["policySource"],
): UploadArtifactTool {
  const inputSchema: UploadArtifactInputSchema = {
    type: "object",
    properties: {
      filePath: { type: "string", description: "Path of the file to upload, e.g. /tmp/screenshot.png" },
    },
    required: ["filePath"],
    additionalProperties: false,
  };
  async function run(
    input: unknown,
    runOptions: { signal?: AbortSignal } = {},
  ): Promise<UploadArtifactToolOutput> {
    let filePath: unknown;
    let signal: AbortSignal | undefined;
    try {
      // Read once, inside the try: an input whose getters throw (a Proxy) is a bad input, not a crash.
      filePath = readOptions(input as { filePath?: unknown }, "the input").filePath;
      signal = readOptions(runOptions, "run options").signal ?? options.signal;
    } catch {
      filePath = undefined;
    }
    if (typeof filePath !== "string" || filePath.trim() === "") {
      return inputFailure("the input must be { filePath: string }, the path of the file to upload");
    }
    const result = await uploadArtifact({ ...options, policy, filePath, ...(signal ? { signal } : {}) });
    return { isError: !result.success, text: messageOf(basename(filePath), result), result };
  }
  const tool: UploadArtifactTool = {
    name: UPLOAD_ARTIFACT_TOOL_NAME,
    description: uploadArtifactToolDescription(policy),
    inputSchema,
    policy,
    policySource,
    run,
    async callMcp(input, callOptions) {
      const output = await run(input, callOptions);
      return { content: [{ type: "text", text: output.text }], isError: output.isError };
    },
  };
  return Object.freeze(tool);
}

/** The caller's policy, checked (`{}` is every default), or undefined when it gave none. */
function givenPolicy(options: UploadArtifactToolOptions): UploadPolicy | undefined {
  if (options.policy === undefined) return undefined;
  return createUploadPolicy(readOptions(options.policy, "policy"));
}

/**
 * The design document's `UploadArtifact` tool: one parameter, `filePath`; a description generated
 * from the policy (`options.policy`, else the design document's with the sizes of
 * `ARTIFACT_MAX_*_SIZE_MB`; {@link loadUploadArtifactTool} asks the server for its own), so that the
 * formats and the size limit it states are the ones checked. Its handler checks the file locally
 * (inside `options.root` when given), uploads it through the two-step flow (streamed from disk),
 * and returns a success message or a detailed error, never throwing. Uploads go where
 * {@link uploadArtifact} sends them: `options`, else the environment
 * (`STOWAGE_API_URL`/`STOWAGE_API_KEY`/`AGENT_SESSION_ID`, or the document's names). Malformed
 * options (not an object, a bad policy or setting) throw INVALID_INPUT here, at construction.
 */
export function createUploadArtifactTool(options: UploadArtifactToolOptions = {}): UploadArtifactTool {
  const given = readOptions(options, "createUploadArtifactTool options");
  const policy = givenPolicy(given);
  if (policy) return buildTool(given, policy, "options");
  return buildTool(given, localUploadPolicy(given.env ?? process.env), "environment");
}

/**
 * {@link createUploadArtifactTool} with the live policy: the server's, read from
 * `GET <apiBase>/agents/artifacts/policy` with the tool's key, so that the description and the local
 * checks state what the server enforces. When the server cannot say (unreachable, a server that
 * predates the route, no API settings), the tool is built on the environment's policy
 * (`policySource: "environment"`) and the failure is reported to `options.logger`: an agent starts
 * with a working tool either way, and the server still decides every upload. A `policy` option
 * is used as given, without a request.
 */
export async function loadUploadArtifactTool(
  options: LoadUploadArtifactToolOptions = {},
): Promise<UploadArtifactTool> {
  const { logger = consoleLogger, ...given } = readOptions(options, "loadUploadArtifactTool options");
  if (givenPolicy(given)) return createUploadArtifactTool(given);
  const env = given.env ?? process.env;
  // Checked first: a malformed ARTIFACT_MAX_* is the caller's to fix, whatever the server says.
  const fallback = localUploadPolicy(env);
  const fromEnv = agentUploadOptionsFromEnv(env);
  const apiBase = given.apiBase ?? fromEnv.apiBase;
  const apiKey = given.accessToken ?? fromEnv.apiKey;
  try {
    if (apiBase === undefined || apiKey === undefined) {
      throw new StowageError(
        "INVALID_INPUT",
        "no API base URL or key to ask the server's upload policy with",
        {
          reason: "MISSING_SETTING",
        },
      );
    }
    const policy = await fetchUploadPolicy({
      apiBase,
      apiKey,
      ...(given.fetch ? { fetch: given.fetch } : {}),
      ...(given.apiTimeoutMs ? { timeoutMs: given.apiTimeoutMs } : {}),
      ...(given.signal ? { signal: given.signal } : {}),
    });
    return buildTool(given, policy, "server");
  } catch (err) {
    const error = StowageError.is(err) ? err : new StowageError("INTERNAL", String(err));
    logger.warn(
      { code: error.code, reason: error.reason, error: error.message },
      "UploadArtifact: the server's upload policy could not be read; using the environment's",
    );
    return buildTool(given, fallback, "environment");
  }
}

/** The part of zod the Agent SDK's tool shape needs: `z.string().describe(text)`. */
export interface ZodStringFactory {
  string(): { describe(description: string): unknown };
}

/**
 * The tool in the Claude Agent SDK's `SdkMcpToolDefinition` shape (what its `tool()` returns):
 * pass it in `createSdkMcpServer({ tools: [...] })`. The SDK takes a zod shape, so the caller
 * passes its own `z` (this package depends on neither the SDK nor zod); `filePath`'s type is
 * what that `z.string()` returns. The handler never throws: a bad input is an `isError` result.
 */
export function uploadArtifactSdkTool<Z extends ZodStringFactory>(
  z: Z,
  options: UploadArtifactToolOptions = {},
): {
  name: "UploadArtifact";
  description: string;
  inputSchema: { filePath: ReturnType<Z["string"]> };
  handler: (args: { filePath?: unknown }, extra: unknown) => Promise<McpCallToolResult>;
} {
  const tool = createUploadArtifactTool(options);
  const filePath = z.string().describe(tool.inputSchema.properties.filePath.description);
  return {
    name: tool.name,
    description: tool.description,
    // describe() returns the schema it was called on: z.string()'s type.
    inputSchema: { filePath: filePath as ReturnType<Z["string"]> },
    handler: (args) => tool.callMcp(args),
  };
}
