import { basename } from "node:path";
import { StowageError } from "@stowage/core";
import { Command } from "commander";
import type { CommandContext } from "./context.js";
import { inputFiles, openedInputPath } from "./input-file.js";
import { jsonOption, printResult } from "./output.js";
import { uploadProgressBars } from "./upload-progress.js";

interface UploadOptions {
  session: string;
  api?: string;
  key?: string;
  json?: boolean;
}

/** The API base URL: `--api`, else `$STOWAGE_API_URL`, else the public URL this app's settings give. */
export async function apiBaseFor(context: CommandContext, options: { api?: string }): Promise<string> {
  if (options.api !== undefined) return options.api;
  if (context.env.STOWAGE_API_URL) return context.env.STOWAGE_API_URL;
  const { loadConfig } = await import("../config.js");
  return (await loadConfig(context.env, context.cwd)).publicUrl;
}

export function uploadCommand(context: CommandContext): Command {
  return new Command("upload")
    .description("Upload files into an agent session through a signed URL (as an agent does)")
    .argument("<file...>", "files to upload (relative to this directory)")
    .requiredOption("--session <id>", "the agent session (registered: `stowage session register`)")
    .option("--api <url>", "the API base URL (default: $STOWAGE_API_URL, else this app's public URL)")
    .option("--key <key>", "the API key (default: $STOWAGE_API_KEY)")
    .addOption(jsonOption())
    .action(async (given: string[], options: UploadOptions) => {
      const apiKey = options.key ?? context.env.STOWAGE_API_KEY;
      if (!apiKey)
        throw new StowageError("UNAUTHORIZED", "an API key is required: --key or $STOWAGE_API_KEY");
      // Opened up front: a missing or unreadable file fails by its name before any request.
      await using inputs = await inputFiles(context, given);
      const apiBase = await apiBaseFor(context, options);
      const { uploadFiles } = await import("@stowage/uploads/agent");
      const progress = uploadProgressBars(context, options.json);
      // One file at a time, so that the bars on the terminal stay readable.
      const results = await uploadFiles(
        inputs.files.map((file) => ({
          apiBase,
          apiKey,
          sessionId: options.session,
          // The file opened and checked above, whatever its path names now; stored under its name.
          filePath: openedInputPath(file),
          filename: basename(file.path),
          onProgress: progress.onProgress,
        })),
        { concurrency: 1 },
      ).finally(progress.stop);
      const uploaded = results.filter((result) => result.success);
      printResult(context, options.json, results, () =>
        uploaded.map((result) => `uploaded ${result.filename} (${result.size} bytes) → ${result.key}`),
      );
      const failed = results.filter((result) => !result.success);
      // With --json the results on stdout say why; stderr keeps the one error document.
      for (const result of options.json ? [] : failed)
        context.note(`failed ${result.filename}: ${result.error} (${result.code})`);
      if (!options.json && failed.some((result) => result.reason === "SESSION_NOT_FOUND")) {
        context.note(
          `hint: session ${options.session} is not registered for this key's user or org; register it with ` +
            `\`stowage session register ${options.session} --user <id>\` (or POST /agents/sessions with the key)`,
        );
      }
      if (failed.length > 0) {
        // One cause for every failure keeps its code and reason; mixed causes are UNAVAILABLE.
        const codes = new Set(failed.map((result) => `${result.code}/${result.reason}`));
        const first = failed[0]!;
        const same = codes.size === 1 && first.code !== undefined;
        throw new StowageError(
          same && first.code ? first.code : "UNAVAILABLE",
          `${failed.length} of ${results.length} uploads failed`,
          same && first.reason ? { reason: first.reason } : {},
        );
      }
    });
}
