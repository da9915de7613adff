import { Command } from "commander";
import type { CommandContext } from "./context.js";
import { untilInterrupted } from "./until-interrupted.js";

export function serveCommand(context: CommandContext): Command {
  return new Command("serve")
    .description("Run the HTTP API and the web viewer (embedded defaults unless configured)")
    .action(async () => {
      const { describeConfig, loadConfig } = await import("../config.js");
      const { startServer } = await import("../http/server.js");
      const server = await startServer(await loadConfig(context.env, context.cwd));
      for (const line of describeConfig(server.services.config)) context.note(line);
      context.note(`serving ${server.url} — viewer at ${server.services.config.publicUrl}/ (Ctrl-C stops)`);
      await untilInterrupted();
      await server.close();
    });
}
