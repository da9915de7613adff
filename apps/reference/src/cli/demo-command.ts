import { Command } from "commander";
import type { CommandContext } from "./context.js";
import { untilInterrupted } from "./until-interrupted.js";

export function demoCommand(context: CommandContext): Command {
  return new Command("demo")
    .description("Start the server on embedded defaults and play a scripted agent run through its real APIs")
    .option("--exit", "stop the server when the run is done instead of serving the viewer", false)
    .option("--log-requests", "print the server's JSON request log too", false)
    .action(async (options: { exit: boolean; logRequests: boolean }) => {
      const { describeConfig, loadConfig } = await import("../config.js");
      const { runDemo } = await import("../demo/run-demo.js");
      const { jsonLogger } = await import("../http/request-log.js");
      const { startServer } = await import("../http/server.js");
      const config = await loadConfig(context.env, context.cwd);
      const quiet = {
        info: () => {},
        error: (fields: Record<string, unknown>, message: string) => console.error(message, fields),
      };
      const server = await startServer(config, { log: options.logRequests ? jsonLogger() : quiet });
      // All of it is narration for the person watching, on stderr as `serve` prints its own: the
      // demo returns no data.
      for (const line of describeConfig(server.services.config)) context.note(line);
      try {
        context.note("");
        const result = await runDemo(server, context.note);
        context.note("");
        context.note(`demo finished: every step above was checked.`);
        context.note(`API key of user demo: ${result.apiKey}`);
        if (options.exit) {
          // The viewer URL would point at a server that is gone by the time anyone opens it.
          context.note(
            "server stopped (--exit); `stowage serve` in this directory serves the run again, " +
              "and the API key above opens it in the viewer",
          );
          return;
        }
        context.note(`viewer: ${result.viewerUrl}`);
        context.note("serving the viewer — Ctrl-C stops");
        await untilInterrupted();
        context.note("stopping the server");
      } finally {
        await server.close();
      }
    });
}
