/**
 * Where Stowage packages write warnings; pass your own to route them. The shape of pino's and
 * console's `warn`: the details first, then the message (`warn({ hash }, "blob … is missing")`),
 * or a message alone. A pino logger keeps the details as fields of the line, `console` prints
 * both, and any logger with that shape (bunyan, winston's child loggers…) fits as it is.
 */
export interface Logger {
  warn(details: Record<string, unknown>, message: string): void;
  warn(message: string): void;
}

function warnToConsole(details: Record<string, unknown>, message: string): void;
function warnToConsole(message: string): void;
function warnToConsole(first: Record<string, unknown> | string, message?: string): void {
  if (typeof first === "string") console.warn(`[stowage] ${first}`);
  else console.warn(`[stowage] ${message}`, first);
}

/** Writes warnings to `console.warn` as `[stowage] <message> <details>`; the default wherever a logger is optional. */
export const consoleLogger: Logger = { warn: warnToConsole };
