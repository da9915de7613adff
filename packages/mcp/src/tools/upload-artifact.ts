import { StowageError } from "@stowage/core";
import { createUploadPolicy, formatSize } from "@stowage/uploads";
import { uploadFile } from "@stowage/uploads/agent";
import { z } from "zod";
import type { McpSession, McpUploads } from "../server/options.js";
import { inputSchemaOf, type McpTool, parseArgs, textResult } from "./tool.js";

const UploadArtifactInput = z.strictObject({
  filePath: z
    .string()
    .min(1)
    .max(4096)
    .describe(
      "The file to upload: absolute, or relative to the workspace. Files outside the workspace, and paths through a symbolic link, are refused.",
    ),
  filename: z
    .string()
    .max(255)
    .optional()
    .describe("The name to store it under (default: the file's own name)."),
});

/**
 * `upload_artifact`: a file of the workspace into the session's uploads, through the upload API
 * (`@stowage/uploads/agent`'s `uploadFile` under `uploads.root`: the file must be a regular file
 * inside the root with one name, opened by walking down from the root without following a link,
 * its descriptor checked, and that descriptor is what is sent;
 * the policy checked locally and by the server, the quota, a signed PUT streamed from disk, a
 * verified completion, retries).
 */
export function uploadArtifactTool(session: McpSession, uploads: McpUploads): McpTool {
  const { root, apiBase, apiKey } = uploads;
  const policy = uploads.policy ?? createUploadPolicy();
  return {
    definition: {
      name: "upload_artifact",
      description:
        "Upload a file of the workspace (a screenshot, a video, a log) into this session's storage, where people " +
        `can see and download it. Allowed: ${Object.keys(policy.allowedTypes).join(", ")}; at most ` +
        `${formatSize(policy.maxFileSizeBytes)} a file. A file with the same name is overwritten.`,
      inputSchema: inputSchemaOf(UploadArtifactInput),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    async call(args, signal) {
      const input = parseArgs(UploadArtifactInput, args, "upload_artifact");
      const result = await uploadFile({
        apiBase,
        apiKey,
        sessionId: session.sessionId,
        root,
        filePath: input.filePath,
        ...(input.filename === undefined ? {} : { filename: input.filename }),
        policy,
        signal,
        ...(uploads.fetch ? { fetch: uploads.fetch } : {}),
      });
      if (!result.success) {
        throw new StowageError(result.code ?? "INTERNAL", result.error ?? "upload failed", {
          ...(result.reason === undefined ? {} : { reason: result.reason }),
        });
      }
      return textResult(
        `Uploaded ${result.filename} (${formatSize(result.size ?? 0)}) to session ${session.sessionId}.`,
        { filename: result.filename, size: result.size, key: result.key, sha256: result.sha256 },
      );
    },
  };
}
