import { StowageError } from "@stowage/core";
import { type UploadProgress, uploadArtifacts } from "@stowage/storage-s3/agent";
import { loadConfig } from "../config.js";
import type { Command } from "./command.js";

const BAR_WIDTH = 30;
const MB = 1024 * 1024;

/** One line per file, redrawn in place on a terminal; only the finished line elsewhere. */
function progressPrinter(stream: NodeJS.WriteStream) {
  return ({ filename, sentBytes, totalBytes }: UploadProgress) => {
    if (!stream.isTTY) return;
    const share = totalBytes === 0 ? 1 : sentBytes / totalBytes;
    const filled = Math.round(share * BAR_WIDTH);
    stream.write(
      `\r[${"#".repeat(filled)}${" ".repeat(BAR_WIDTH - filled)}] ${String(Math.round(share * 100)).padStart(3)}% ` +
        `${(sentBytes / MB).toFixed(1)}/${(totalBytes / MB).toFixed(1)} MB ${filename}`,
    );
    if (sentBytes === totalBytes) stream.write("\n");
  };
}

export const uploadCommand: Command = {
  name: "upload",
  summary: "Upload files to an agent session's artifacts through a signed URL (as an agent does)",
  args: "<file…>",
  options: {
    session: { type: "string", placeholder: "id", description: "the agent session (required)" },
    api: {
      type: "string",
      placeholder: "url",
      description: "the API base URL (default: $STOWAGE_API_URL, else this app's public URL)",
    },
    key: { type: "string", placeholder: "key", description: "the API key (default: $STOWAGE_API_KEY)" },
  },
  async run({ values, positionals }, context) {
    if (positionals.length === 0) throw new StowageError("INVALID_INPUT", "give at least one file to upload");
    if (typeof values.session !== "string") throw new StowageError("INVALID_INPUT", "--session is required");
    const apiKey = typeof values.key === "string" ? values.key : context.env.STOWAGE_API_KEY;
    if (!apiKey) throw new StowageError("UNAUTHORIZED", "an API key is required: --key or $STOWAGE_API_KEY");
    const apiBase =
      typeof values.api === "string"
        ? values.api
        : (context.env.STOWAGE_API_URL ?? (await loadConfig(context.env, context.cwd)).publicUrl);
    const onProgress = progressPrinter(process.stderr);
    // One file at a time, so that one progress line on the terminal stays readable.
    const results = await uploadArtifacts(
      positionals.map((filePath) => ({
        apiBase,
        apiKey,
        sessionId: values.session as string,
        filePath,
        onProgress,
      })),
      { concurrency: 1 },
    );
    let failed = 0;
    for (const result of results) {
      if (result.success) context.out(`uploaded ${result.filename} (${result.size} bytes) → ${result.key}`);
      else {
        failed++;
        context.out(`failed ${result.filename}: ${result.error}`);
      }
    }
    if (failed > 0) throw new StowageError("UNAVAILABLE", `${failed} of ${results.length} uploads failed`);
  },
};
