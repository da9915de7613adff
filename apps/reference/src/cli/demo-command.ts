import { describeConfig, loadConfig } from "../config.js";
import { runDemo } from "../demo/run-demo.js";
import { jsonLogger } from "../http/request-log.js";
import { startServer } from "../http/server.js";
import type { Command } from "./command.js";
import { untilStopped } from "./serve-command.js";

export const demoCommand: Command = {
  name: "demo",
  summary: "Start the server on embedded defaults and play a scripted agent run through its real APIs",
  options: {
    exit: {
      type: "boolean",
      default: false,
      description: "stop the server when the run is done instead of serving the viewer",
    },
    "log-requests": {
      type: "boolean",
      default: false,
      description: "print the server's JSON request log too",
    },
  },
  async run({ values }, context) {
    const config = await loadConfig(context.env, context.cwd);
    const quiet = {
      info: () => {},
      error: (message: string, fields?: Record<string, unknown>) => console.error(message, fields),
    };
    const server = await startServer(config, { log: values["log-requests"] ? jsonLogger() : quiet });
    for (const line of describeConfig(server.services.config)) context.out(line);
    try {
      context.out("");
      const result = await runDemo(server, context.out);
      context.out("");
      context.out(`demo finished: every step above was checked.`);
      context.out(`API key of user demo: ${result.apiKey}`);
      context.out(`viewer: ${result.viewerUrl}`);
      if (values.exit) return;
      context.out("serving the viewer — Ctrl-C stops");
      await untilStopped();
    } finally {
      await server.close();
    }
  },
};
