import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { StowageError } from "@stowage/core";
import { captureSession, claudeSessionLocation, isSessionId, restoreSession } from "@stowage/sessions";
import type { Command, OptionSpec } from "./command.js";
import { withServices } from "./context.js";

const where: Record<string, OptionSpec> = {
  cwd: {
    type: "string",
    placeholder: "dir",
    description: "the agent's working directory (default: this directory)",
  },
  "config-dir": {
    type: "string",
    placeholder: "dir",
    description: "Claude Code's config directory (default: $CLAUDE_CONFIG_DIR, else ~/.claude)",
  },
};

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "")
    throw new StowageError("INVALID_INPUT", `--${name} is required`);
  return value;
}

function location(values: Record<string, unknown>, cwd: string) {
  return {
    cwd: typeof values.cwd === "string" ? values.cwd : cwd,
    ...(typeof values["config-dir"] === "string" ? { configDir: values["config-dir"] } : {}),
  };
}

export const sessionCommand: Command = {
  name: "session",
  summary: "Capture agent sessions into the database and restore them (ephemeral containers)",
  subcommands: [
    {
      name: "capture",
      summary: "Capture a Claude Code session (transcript and companion files) and store it for a request",
      options: {
        ...where,
        session: { type: "string", placeholder: "uuid", description: "the session id (required)" },
        request: { type: "string", placeholder: "id", description: "the request it belongs to (required)" },
      },
      async run({ values }, context) {
        const captured = await captureSession({
          ...location(values, context.cwd),
          sessionId: required(values, "session"),
        });
        await withServices(context, async (services) => {
          const record = await services.sessionBlobs.create({
            requestId: required(values, "request"),
            agentType: "claude-code",
            ...captured,
          });
          context.out(
            `stored session ${record.sessionId} for request ${record.requestId}: ${captured.manifest.files.length} files, ` +
              `${record.rawSizeBytes} bytes → ${record.blobSizeBytes} bytes (${record.codec}), expires ${record.expiresAt?.toISOString() ?? "never"}`,
          );
          for (const skipped of captured.skipped) context.out(`skipped ${skipped.path}: ${skipped.reason}`);
        });
      },
    },
    {
      name: "restore",
      summary: "Restore the latest stored session of a request before resuming it",
      options: {
        ...where,
        request: { type: "string", placeholder: "id", description: "the request (required)" },
      },
      async run({ values }, context) {
        const requestId = required(values, "request");
        await withServices(context, async (services) => {
          const latest = await services.sessionBlobs.getLatestForRequest(requestId);
          if (!latest) throw new StowageError("NOT_FOUND", `no live session stored for request ${requestId}`);
          const restored = await restoreSession(latest, location(values, context.cwd));
          context.out(
            `restored session ${latest.sessionId}: ${restored.files.length} files in ${restored.projectDir}`,
          );
          context.out(`resume it with: claude --resume ${latest.sessionId}`);
        });
      },
    },
    {
      name: "ls",
      summary: "List the Claude Code sessions of a working directory that can be captured",
      options: where,
      async run({ values }, context) {
        const { projectDir } = await claudeSessionLocation({
          ...location(values, context.cwd),
          sessionId: "00000000-0000-4000-8000-000000000000",
        });
        const names = await readdir(projectDir).catch(() => [] as string[]);
        const sessions = names.filter((name) => name.endsWith(".jsonl") && isSessionId(name.slice(0, -6)));
        if (sessions.length === 0) context.out(`no sessions in ${projectDir}`);
        for (const name of sessions) {
          const info = await stat(join(projectDir, name));
          context.out(`${name.slice(0, -6)}  ${info.size} bytes  ${info.mtime.toISOString()}`);
        }
      },
    },
  ],
};
