/** The logging surface Stowage packages write warnings to; pass your own to route them. */
export interface Logger {
  warn(message: string, details?: Record<string, unknown>): void;
}

/** Writes warnings to `console.warn`; the default wherever a logger is optional. */
export const consoleLogger: Logger = {
  warn(message, details) {
    if (details === undefined) console.warn(`[stowage] ${message}`);
    else console.warn(`[stowage] ${message}`, details);
  },
};
