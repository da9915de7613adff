import { StowageError } from "@stowage/core";
import type { McpUploads } from "@stowage/mcp";
import { Command } from "commander";
import { type CommandContext, resolvePath } from "./context.js";
import { withSessionStores } from "./open.js";
import { addPrincipalOptions, type PrincipalOptions, requiredPrincipal } from "./principal-option.js";
import { apiBaseFor } from "./upload-command.js";

interface McpOptions extends PrincipalOptions {
  session: string;
  uploadRoot?: string;
  api?: string;
  key?: string;
}

/**
 * `stowage mcp --session <id> --user <id>`: one of the principal's agent sessions as an MCP server
 * on stdin/stdout (what `.mcp.json`, Codex's `[mcp_servers]` and OpenCode's `mcp` start). It opens
 * the shared store only, so it runs beside `stowage serve`. Thread subscriptions hear the server's
 * posts through PostgreSQL when one is configured, and look at the threads every half second
 * otherwise. With `--upload-root` it offers `upload_artifact` for that directory's files, sent
 * through the server's upload API with the principal's key (its policy, its quota).
 */
export function mcpCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    new Command("mcp").description(
      "Serve an agent session over MCP on stdin/stdout: artifacts, agent outputs, blobs, threads, content refs, hot state",
    ),
  )
    .requiredOption("--session <id>", "the agent session")
    .option(
      "--upload-root <dir>",
      "offer upload_artifact for the files of this directory (the agent's workspace); off by default",
    )
    .option(
      "--api <url>",
      "with --upload-root: the API uploads go through (default: $STOWAGE_API_URL, else this app's public URL)",
    )
    .option("--key <key>", "with --upload-root: an API key of --user/--org (default: $STOWAGE_API_KEY)")
    .action(async (options: McpOptions) => {
      const principal = requiredPrincipal(options);
      const { runStdioServer } = await import("@stowage/mcp");
      const { openAgentSession } = await import("@stowage/tenancy/shared");
      await withSessionStores(context, async (stores) => {
        const tenant = stores.tenant(principal);
        // A registered session is served before anything is stored in it.
        const session = await openAgentSession(
          tenant.registeredSessions,
          tenant.agentSessions,
          options.session,
        );
        let uploads: McpUploads | undefined;
        if (options.uploadRoot !== undefined) {
          const apiKey = options.key ?? context.env.STOWAGE_API_KEY;
          if (!apiKey) {
            throw new StowageError(
              "UNAUTHORIZED",
              "--upload-root needs an API key: --key or $STOWAGE_API_KEY",
            );
          }
          // Uploads go to the key's principal: a key of someone else would put them in another namespace.
          const owner = await stores.apiKeys.authenticate(apiKey);
          if (!owner) throw new StowageError("UNAUTHORIZED", "the API key is not valid");
          if (owner.kind !== principal.kind || owner.id !== principal.id) {
            throw new StowageError("FORBIDDEN", `the API key is not ${principal.kind} ${principal.id}'s`, {
              reason: "KEY_OF_ANOTHER_PRINCIPAL",
            });
          }
          const { createUploadPolicy, uploadPolicyOptionsFromEnv } = await import("@stowage/uploads");
          uploads = {
            root: resolvePath(context, options.uploadRoot),
            apiBase: await apiBaseFor(context, options),
            apiKey,
            // The server's policy comes from the same variables; it checks again itself.
            policy: createUploadPolicy(uploadPolicyOptionsFromEnv(context.env)),
          };
        }
        const server = await runStdioServer({
          session,
          blobs: tenant.blobs,
          threads: tenant.threads,
          registry: tenant.registry,
          hotState: tenant.hotState.reader,
          ...(uploads ? { uploads } : {}),
          threadUpdates: stores.threadsNotifiedAcrossProcesses ? "notifier" : "poll",
          stdout: context.stdout,
          // Problems go to stderr: stdout carries the protocol.
          logger: {
            warn: (first: Record<string, unknown> | string, message?: string) =>
              context.note(
                `warning: ${typeof first === "string" ? first : `${message} ${JSON.stringify(first)}`}`,
              ),
          },
        });
        context.note(
          `stowage mcp: serving session ${options.session} on stdio${uploads ? `, uploads from ${uploads.root}` : ""}`,
        );
        await server.closed;
      });
    });
}
