import { describeConfig, loadConfig } from "../config.js";
import { startServer } from "../http/server.js";
import type { Command } from "./command.js";

/** Resolves on SIGINT or SIGTERM. */
export function untilStopped(): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
}

export const serveCommand: Command = {
  name: "serve",
  summary: "Run the HTTP API and the web viewer (embedded defaults unless configured)",
  async run(_input, context) {
    const server = await startServer(await loadConfig(context.env, context.cwd));
    for (const line of describeConfig(server.services.config)) context.out(line);
    context.out(`serving ${server.url} — viewer at ${server.services.config.publicUrl}/ (Ctrl-C stops)`);
    await untilStopped();
    await server.close();
  },
};
