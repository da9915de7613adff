import type { Logger } from "@stowage/core";

/** A Logger that keeps what it is told, for asserting that nothing was logged silently. */
export function captureLogger(): Logger & {
  lines: { message: string; details?: Record<string, unknown> }[];
} {
  const lines: { message: string; details?: Record<string, unknown> }[] = [];
  return {
    lines,
    warn(first: Record<string, unknown> | string, message?: string) {
      if (typeof first === "string") lines.push({ message: first });
      else lines.push({ message: message ?? "", details: first });
    },
  };
}
