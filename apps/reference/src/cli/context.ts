import { loadConfig } from "../config.js";
import { createServices, type Services } from "../services.js";
import type { CommandContext } from "./command.js";

/** Runs `work` with the app's services on the configured data directory, closing them after. */
export async function withServices<T>(
  context: CommandContext,
  work: (services: Services) => Promise<T>,
): Promise<T> {
  const services = await createServices(await loadConfig(context.env, context.cwd));
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}
