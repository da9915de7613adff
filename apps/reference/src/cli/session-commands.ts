import { StowageError } from "@stowage/core";
import type { SessionAgent } from "@stowage/sessions";
import { Command, Option } from "commander";
import { installedAgentVersion } from "./agent-cli-version.js";
import { type CommandContext, resolvePath } from "./context.js";
import { readSessionBlobs, withSessionBlobs, withStoredData } from "./open.js";
import {
  describeOpencodeCli,
  findAgentCommand,
  findOpencodeCli,
  type OpencodeCli,
  requiredOpencodeCli,
} from "./opencode-cli.js";
import { jsonOption, printResult } from "./output.js";
import { addPrincipalOptions, type PrincipalOptions, requiredPrincipal } from "./principal-option.js";
import { withElapsedLine } from "./progress.js";
import { recordSessionActivity } from "./session-activity.js";
import {
  addFallbackOptions,
  checkFallbackOptions,
  type FallbackOptions,
  fallbackApplies,
  printHistoryFallback,
} from "./session-fallback.js";
import { listSessionsCommand, registerSessionCommand } from "./session-registry-commands.js";
import { storedSessionsCommand } from "./session-stored-command.js";

/** `--cwd` / `--config-dir`: where the agent's session files are. */
interface LocationOptions {
  cwd?: string;
  configDir?: string;
}

function addLocationOptions(command: Command): Command {
  return command
    .option("--cwd <dir>", "the agent's working directory (default: this directory)")
    .option(
      "--config-dir <dir>",
      "the agent's config directory: Claude Code's (default: $CLAUDE_CONFIG_DIR, else ~/.claude), or OpenCode's for --with-config (default: $XDG_CONFIG_HOME/opencode, else ~/.config/opencode)",
    );
}

/** `--agent` and where the other agents keep their sessions. */
interface AgentOptions {
  agent?: SessionAgent;
  codexHome?: string;
  codex?: string;
  opencode?: string;
}

const AGENT_CHOICES: SessionAgent[] = ["claude-code", "codex", "opencode"];

function addAgentOptions(command: Command, agentDefault?: SessionAgent): Command {
  const agent = new Option(
    "--agent <name>",
    agentDefault
      ? "the agent whose session it is"
      : "the agent the stored session must be of (default: what it records)",
  ).choices(AGENT_CHOICES);
  return command
    .addOption(agentDefault ? agent.default(agentDefault) : agent)
    .option("--codex-home <dir>", "Codex's home (default: $CODEX_HOME, else ~/.codex)")
    .option(
      "--codex <cli>",
      "the Codex CLI whose app server reads a Codex session's goal at capture and sets it again at restore: a command looked up on PATH, or a path (default: codex on PATH; without one the goal is not kept, and the output says so)",
    )
    .option(
      "--opencode <cli>",
      "the OpenCode CLI that exports and imports OpenCode sessions: a command looked up on PATH, or a path (./bin/opencode) (default: opencode on PATH)",
    );
}

/** The Codex home the options name, else `$CODEX_HOME`. */
function codexHomeOf(context: CommandContext, options: AgentOptions) {
  const codexHome =
    options.codexHome === undefined ? context.env.CODEX_HOME : resolvePath(context, options.codexHome);
  return codexHome === undefined ? {} : { codexHome };
}

/** How the sessions package runs the OpenCode CLI: in the agent's directory, with the user's environment. */
function opencodeRun(context: CommandContext, options: LocationOptions, cli: OpencodeCli) {
  return {
    bin: cli.bin,
    env: context.env,
    cwd: options.cwd === undefined ? context.cwd : resolvePath(context, options.cwd),
  };
}

/**
 * The Codex CLI (`--codex`, else `codex` on PATH) whose app server reads and sets a Codex
 * thread's goal, as the sessions package runs it; undefined for another agent or when none is found.
 */
async function codexGoalCli(context: CommandContext, options: AgentOptions, agent: string | undefined) {
  if (agent !== "codex") return undefined;
  const cli = await findAgentCommand(context, "codex", options.codex);
  return cli === undefined ? undefined : { cli, run: { bin: cli.bin, env: context.env } };
}

/** Says on stderr what became of a Codex thread's goal. */
function noteCodexGoal(
  context: CommandContext,
  cli: OpencodeCli | undefined,
  goal: { read: boolean; reason?: string } | { set: boolean; reason?: string } | undefined,
) {
  if (goal === undefined) return;
  const done = "read" in goal ? goal.read : goal.set;
  const verb = "read" in goal ? "read" : "set again";
  if (done)
    context.note(`the thread's goal ${verb} with the Codex CLI ${cli ? describeOpencodeCli(cli) : ""}`);
  else
    context.note(
      `the thread's goal not ${verb}: ${cli ? goal.reason : "no codex on PATH (give --codex <cli>)"}`,
    );
}

/** What `captureSession` is told about where the session is, per agent. */
function captureWhere(
  context: CommandContext,
  options: LocationOptions & AgentOptions & { session: string; withConfig?: boolean; withMemory?: boolean },
  clis: { opencode: OpencodeCli | undefined; codex: { bin: string; env: NodeJS.ProcessEnv } | undefined },
) {
  const { opencode, codex } = clis;
  const sessionId = options.session;
  const withConfig = options.withConfig ? { withConfig: true } : {};
  return options.agent === "codex"
    ? {
        agent: "codex" as const,
        sessionId,
        ...codexHomeOf(context, options),
        cwd: location(context, options).cwd,
        ...withConfig,
        ...(codex ? { codex } : {}),
      }
    : opencode
      ? {
          agent: "opencode" as const,
          sessionId,
          opencode: opencodeRun(context, options, opencode),
          ...(options.configDir === undefined ? {} : { configDir: resolvePath(context, options.configDir) }),
          ...withConfig,
        }
      : {
          ...location(context, options),
          sessionId,
          ...withConfig,
          ...(options.withMemory ? { withMemory: true } : {}),
        };
}

/** How to go on with a restored session, per agent. */
const RESUME_HINT: Record<SessionAgent, (sessionId: string) => string> = {
  "claude-code": (id) => `claude --resume ${id}`,
  codex: (id) => `codex exec resume ${id} "<prompt>"`,
  opencode: (id) => `opencode run --session ${id} "<prompt>"`,
};

function location(context: CommandContext, options: LocationOptions) {
  return {
    cwd: options.cwd === undefined ? context.cwd : resolvePath(context, options.cwd),
    ...(options.configDir === undefined ? {} : { configDir: resolvePath(context, options.configDir) }),
  };
}

/**
 * How `session capture` stores a session: `chunked` (default) keeps its files as chunks and its
 * images once each in the principal's blobs (a follow-up stores only what is new); `adr` keeps
 * one self-contained gzip blob in the row, as document 002's `agent_sessions` row does.
 */
type CaptureFormat = "chunked" | "adr";

function captureCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    addAgentOptions(
      addLocationOptions(
        new Command("capture").description(
          "Capture an agent's session (Claude Code: transcript, companion files and the session's files in its config directory: checkpoints, tasks, plans; Codex: the rollout; OpenCode: its export) and store it for a request",
        ),
      ),
      "claude-code",
    ),
  )
    .requiredOption("--session <id>", "the session id")
    .requiredOption("--request <id>", "the request it belongs to")
    .addOption(
      new Option(
        "--format <format>",
        "chunked: the files as chunks and images once each in the principal's blobs, a follow-up storing only what is new; adr: one self-contained gzip blob in the row",
      )
        .choices(["chunked", "adr"])
        .default("chunked"),
    )
    .option(
      "--with-config",
      "also capture the configuration a resumed run needs, the user's and the project's (--cwd): Claude Code's settings, CLAUDE.md, commands, agents, skills, plugins, .mcp.json, .claude/; Codex's config.toml, AGENTS.md, prompts, skills, rules; OpenCode's opencode.json(c), AGENTS.md, agents, commands, modes, plugins, .opencode/. Secrets left out and listed",
    )
    .option(
      "--with-memory",
      "Claude Code: also capture the project's auto-memory (projects/<key>/memory/), restored where the project has none",
    )
    .addOption(jsonOption())
    .action(
      async (
        options: LocationOptions &
          AgentOptions &
          PrincipalOptions & {
            session: string;
            request: string;
            format: CaptureFormat;
            withConfig?: boolean;
            withMemory?: boolean;
            json?: boolean;
          },
      ) => {
        const principal = requiredPrincipal(options);
        if (options.withMemory && options.agent !== "claude-code") {
          throw new StowageError(
            "INVALID_INPUT",
            `--with-memory captures Claude Code's project memory; ${options.agent} keeps none apart from its session`,
          );
        }
        const startedAt = performance.now();
        const { captureSession } = await import("@stowage/sessions");
        const sessionId = options.session;
        const opencode =
          options.agent === "opencode"
            ? requiredOpencodeCli(
                await findOpencodeCli(context, options.opencode),
                "capturing an OpenCode session",
              )
            : undefined;
        const codex = await codexGoalCli(context, options, options.agent);
        const where = captureWhere(context, options, { opencode, codex: codex?.run });
        // Chunks go to the principal's blobs in the shared store, where the server reads them.
        const label = `capturing session ${sessionId}`;
        const captured = await withElapsedLine(context, { json: options.json, label }, () =>
          withStoredData(context, (stored) =>
            captureSession(
              options.format === "adr"
                ? { ...where, codec: "gzip" }
                : { ...where, blobs: stored.ownedBlobs(principal) },
            ),
          ),
        );
        await withSessionBlobs(context, async ({ sessionBlobs, ownerOf }) => {
          const record = await sessionBlobs.create({
            owner: ownerOf(principal),
            requestId: options.request,
            ...captured,
            agentType: captured.agent,
          });
          await recordSessionActivity(context, principal, "capture", {
            sessionId: record.sessionId,
            requestId: record.requestId,
            agent: record.agentType,
            versionSource: captured.manifest,
            fileCount: captured.manifest.files.length,
            rawBytes: record.rawSizeBytes,
            storedBytes: record.storedBytes,
            startedAt,
          });
          printResult(
            context,
            options.json,
            {
              sessionId: record.sessionId,
              requestId: record.requestId,
              agentType: record.agentType,
              files: captured.manifest.files.length,
              agentVersion: captured.manifest.agentVersion ?? null,
              format: options.format,
              rawSizeBytes: record.rawSizeBytes,
              storedBytes: record.storedBytes,
              blobSizeBytes: record.blobSizeBytes,
              codec: record.codec,
              expiresAt: record.expiresAt ?? null,
              skipped: captured.skipped,
              ...(captured.secretsLeftOut ? { secretsLeftOut: captured.secretsLeftOut } : {}),
              ...(captured.codexGoal ? { codexGoal: captured.codexGoal } : {}),
              ...(opencode ? { opencodeCli: opencode.bin } : {}),
            },
            () => [
              `stored session ${record.sessionId} for request ${record.requestId}: ${captured.manifest.files.length} files (${record.agentType}), ` +
                `${record.rawSizeBytes} bytes, ${record.storedBytes} bytes stored (${options.format === "adr" ? `one ${record.codec} blob` : "new chunks"}), expires ${record.expiresAt?.toISOString() ?? "never"}`,
            ],
          );
          for (const skipped of captured.skipped) context.note(`skipped ${skipped.path}: ${skipped.reason}`);
          for (const secret of captured.secretsLeftOut ?? [])
            context.note(
              `left out the secret ${secret.field} of ${secret.path}: set it again where you restore`,
            );
          if (opencode) context.note(`exported with the OpenCode CLI ${describeOpencodeCli(opencode)}`);
          noteCodexGoal(context, codex?.cli, captured.codexGoal);
        });
      },
    );
}

function restoreCommand(context: CommandContext): Command {
  return addFallbackOptions(
    addPrincipalOptions(
      addAgentOptions(
        addLocationOptions(
          new Command("restore").description(
            "Restore the latest stored session of a request where its agent looks for it, before resuming it",
          ),
        ),
      ),
    ),
  )
    .requiredOption("--request <id>", "the request")
    .option(
      "--agent-cli <cli>",
      "the installed agent CLI whose --version is compared with the version the session was captured with (default: claude or codex on PATH, the OpenCode CLI in use)",
    )
    .addOption(jsonOption())
    .action(
      async (
        options: LocationOptions &
          AgentOptions &
          PrincipalOptions &
          FallbackOptions & { request: string; agentCli?: string; json?: boolean },
      ) => {
        const principal = requiredPrincipal(options);
        checkFallbackOptions(options);
        const startedAt = performance.now();
        const { restoreSession } = await import("@stowage/sessions");
        const restoring = readSessionBlobs(context, async ({ sessionBlobs, ownerOf, where: stored }) => {
          const latest = await sessionBlobs?.getLatestForRequest(ownerOf(principal), options.request);
          if (!latest) {
            throw new StowageError(
              "NOT_FOUND",
              `no live session stored for request ${options.request} of ${principal.kind} ${principal.id} in ${stored}` +
                (sessionBlobs
                  ? ""
                  : " (no database there: nothing was captured into it; STOWAGE_DATA_DIR names another data directory)"),
            );
          }
          // Only an OpenCode session needs its CLI, to import it (one asked for as another agent is refused below).
          const opencode =
            latest.agentType === "opencode" && (options.agent ?? "opencode") === "opencode"
              ? requiredOpencodeCli(
                  await findOpencodeCli(context, options.opencode),
                  `restoring OpenCode session ${latest.sessionId}`,
                )
              : undefined;
          const codex = await codexGoalCli(context, options, latest.agentType);
          // Compared with the version the session records before anything is written: refused
          // (CONFLICT, AGENT_VERSION_MISMATCH) only where the formats are known to differ.
          const agent = AGENT_CHOICES.find((name) => name === latest.agentType);
          const installed = agent
            ? await installedAgentVersion(context, agent, options.agentCli, opencode)
            : { problem: `the stored session's agent is not one of ${AGENT_CHOICES.join(", ")}` };
          // A capture kept as chunks is rebuilt from the principal's blobs, each file checked.
          const label = `restoring session ${latest.sessionId}`;
          const restored = await withElapsedLine(context, { json: options.json, label }, () =>
            withStoredData(context, (shared) =>
              restoreSession(latest, {
                ...location(context, options),
                ...codexHomeOf(context, options),
                ...(opencode ? { opencode: opencodeRun(context, options, opencode) } : {}),
                ...(codex ? { codex: codex.run } : {}),
                ...(options.agent === undefined ? {} : { agent: options.agent }),
                ...("output" in installed ? { agentVersion: installed.output } : {}),
                blobs: shared.ownedBlobs(principal),
              }),
            ),
          );
          await recordSessionActivity(context, principal, "restore", {
            sessionId: latest.sessionId,
            requestId: latest.requestId,
            agent: restored.agent,
            versionSource: restored,
            fileCount: restored.files.length,
            rawBytes: latest.rawSizeBytes,
            storedBytes: latest.storedBytes,
            startedAt,
          });
          const where = restored.directory ?? "OpenCode's database (opencode import)";
          printResult(
            context,
            options.json,
            {
              sessionId: latest.sessionId,
              agentType: restored.agent,
              directory: restored.directory ?? null,
              projectDir: restored.projectDir ?? null,
              files: restored.files.length,
              agentVersion: restored.agentVersion ?? null,
              versionCheck: restored.agentVersionCheck,
              ...(restored.configuration ? { configuration: restored.configuration } : {}),
              ...(restored.codexGoal ? { codexGoal: restored.codexGoal } : {}),
              ...(opencode ? { opencodeCli: opencode.bin } : {}),
            },
            () => [
              `restored ${restored.agent} session ${latest.sessionId}: ${restored.files.length} files in ${where}`,
            ],
          );
          for (const path of restored.configuration?.kept ?? [])
            context.note(`kept the configuration already at ${path} (a restore never replaces it)`);
          for (const skipped of restored.configuration?.skipped ?? [])
            context.note(`configuration ${skipped.path} not restored: ${skipped.reason}`);
          const check = restored.agentVersionCheck;
          if (check.verdict === "differs") context.note(`warning: ${check.warning}`);
          else if (check.verdict === "unknown") {
            context.note(
              `agent version not checked: ${"problem" in installed ? installed.problem : restored.agentVersion === undefined ? "the session records none" : `${installed.cli} --version printed no version`}`,
            );
          }
          if (opencode) context.note(`imported with the OpenCode CLI ${describeOpencodeCli(opencode)}`);
          noteCodexGoal(context, codex?.cli, restored.codexGoal);
          context.note(`resume it with: ${RESUME_HINT[restored.agent](latest.sessionId)}`);
        });
        // Document 002's fallback: what could not be restored is still a conversation to go on from.
        await restoring.catch((err: unknown) => {
          if (options.fallback !== "history" || !fallbackApplies(err)) throw err;
          return printHistoryFallback(context, principal, options.request, options, err);
        });
      },
    );
}

function localCommand(context: CommandContext): Command {
  return addLocationOptions(
    new Command("local").description(
      "List the Claude Code sessions of a working directory on this machine that can be captured",
    ),
  )
    .addOption(jsonOption())
    .action(async (options: LocationOptions & { json?: boolean }) => {
      const { listClaudeSessions } = await import("@stowage/sessions");
      const { projectDir, sessions } = await listClaudeSessions(location(context, options));
      const listed = sessions.map(({ sessionId, sizeBytes, modified }) => ({
        sessionId,
        size: sizeBytes,
        modified: modified.toISOString(),
      }));
      printResult(context, options.json, listed, () =>
        listed.map((session) => `${session.sessionId}  ${session.size} bytes  ${session.modified}`),
      );
      if (listed.length === 0) context.note(`no sessions in ${projectDir}`);
    });
}

export function sessionCommand(context: CommandContext): Command {
  return new Command("session")
    .description(
      "Agent sessions: register them for uploads, capture them into the database and restore them (ephemeral containers)",
    )
    .addCommand(registerSessionCommand(context))
    .addCommand(listSessionsCommand(context))
    .addCommand(storedSessionsCommand(context))
    .addCommand(captureCommand(context))
    .addCommand(restoreCommand(context))
    .addCommand(localCommand(context));
}
