import { spawn } from "node:child_process";
import { describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { assertAgentCliOptions } from "../agents/agent-cli-options.js";

/** How long one `codex app-server` conversation may take by default: one minute. */
export const DEFAULT_CODEX_TIMEOUT_MS = 60_000;

/**
 * How Stowage runs the Codex CLI (for the thread's goal, which Codex keeps only in its
 * `goals_1.sqlite`): the caller installs it and says where it is.
 */
export interface CodexCliOptions {
  /** Path to the `codex` binary (e.g. `node_modules/.bin/codex`). */
  bin: string;
  /** Environment of the CLI, laid over this process's (`CODEX_HOME` is always the session's). */
  env?: NodeJS.ProcessEnv;
  /** Milliseconds one `codex app-server` conversation may take. Default 60,000 (1 minute). */
  timeoutMs?: number;
}

/** Throws INVALID_INPUT unless `value` is usable {@link CodexCliOptions}. */
export function assertCodexCliOptions(value: unknown): asserts value is CodexCliOptions {
  assertAgentCliOptions(value, "codex", { message: "codex must be { bin: <path to the codex CLI> }" });
}

/** One JSON-RPC request to the app server. */
export interface AppServerCall {
  method: string;
  params: Record<string, unknown>;
}

/** The end of the server's stderr kept for the error message. */
const STDERR_KEPT_CHARS = 16 * 1024;
/** A line of the server's stdout longer than this ends the conversation (a goal is small). */
const MAX_LINE_CHARS = 1024 * 1024;

/**
 * Runs `codex app-server` (JSON-RPC over its stdin and stdout, never a socket) with `codexHome`
 * as its `CODEX_HOME`, says `initialize` (opting into the experimental methods, where the goal
 * ones are), then sends `calls` one after another and returns their results. The server is
 * killed once answered, or after `timeoutMs`. A server that fails, times out, prints what is
 * not JSON-RPC or answers an error is UNAVAILABLE (reason `CODEX_CLI_FAILED`); `signal` ABORTED.
 */
export function callCodexAppServer(
  cli: CodexCliOptions,
  codexHome: string,
  calls: readonly AppServerCall[],
  signal?: AbortSignal,
): Promise<unknown[]> {
  throwIfAborted(signal, "codex app-server");
  const timeoutMs = cli.timeoutMs ?? DEFAULT_CODEX_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(cli.bin, ["app-server"], {
      env: { ...process.env, ...cli.env, CODEX_HOME: codexHome },
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    const results: unknown[] = [];
    let stderr = "";
    let pending = "";
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      child.stdin.end();
      child.kill("SIGKILL");
      if (error) reject(error);
      else resolve(results);
    };
    const fail = (why: string, cause?: unknown) => {
      const said = stderr.trim().slice(-500);
      finish(
        new StowageError("UNAVAILABLE", `codex app-server failed (${why})${said ? `: ${said}` : ""}`, {
          reason: "CODEX_CLI_FAILED",
          ...(cause === undefined ? {} : { cause }),
        }),
      );
    };
    const onAbort = () => finish(new StowageError("ABORTED", "codex app-server: aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const onMessage = (message: { id?: unknown; result?: unknown; error?: { message?: unknown } }) => {
      // Notifications (no id) and the server's own requests are not answers.
      if (typeof message.id !== "number" || !("result" in message || "error" in message)) return;
      if (message.error !== undefined) {
        const method = message.id === 0 ? "initialize" : calls[message.id - 1]?.method;
        return fail(`${method} answered: ${describeValue(message.error?.message ?? message.error)}`);
      }
      if (message.id === 0) send({ method: "initialized" });
      else results.push(message.result);
      if (results.length === calls.length) return finish();
      const next = results.length;
      send({ id: next + 1, ...calls[next] });
    };
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      pending += chunk;
      for (let end = pending.indexOf("\n"); end >= 0 && !settled; end = pending.indexOf("\n")) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        if (line.trim() === "") continue;
        try {
          onMessage(JSON.parse(line));
        } catch (err) {
          return fail(`printed a line that is not JSON: ${describeValue(line.slice(0, 200))}`, err);
        }
      }
      if (pending.length > MAX_LINE_CHARS) fail(`printed a line over ${MAX_LINE_CHARS} characters`);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT_CHARS);
    });
    child.stdin.on("error", () => {});
    child.on("error", (err) => fail(err.message, err));
    child.on("close", (code, closedBy) => fail(`exited ${code ?? closedBy} before answering`));
    send({
      id: 0,
      method: "initialize",
      params: { clientInfo: { name: "stowage", version: "1" }, capabilities: { experimentalApi: true } },
    });
  });
}
