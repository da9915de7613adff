import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { consoleLogger, type Logger } from "../src/logger.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("Logger", () => {
  it("takes a pino logger as it is, and pino keeps the details as fields of the line", () => {
    const lines: string[] = [];
    const logger: Logger = pino(
      { base: null, timestamp: false },
      { write: (line: string) => lines.push(line) },
    );
    logger.warn({ hash: "ab12", reason: "missing" }, "blob ab12 is missing; its reference is kept");
    logger.warn("a message alone");
    // pino's documented line: level 40 is warn, the object's keys beside `msg`.
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      { level: 40, hash: "ab12", reason: "missing", msg: "blob ab12 is missing; its reference is kept" },
      { level: 40, msg: "a message alone" },
    ]);
  });

  it("takes console as it is; consoleLogger prints the message first, then the details", () => {
    const fromConsole: Logger = console;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    fromConsole.warn({ key: "a" }, "plain console");
    consoleLogger.warn({ key: "a" }, "through Stowage's default");
    consoleLogger.warn("no details");
    expect(warn.mock.calls).toEqual([
      [{ key: "a" }, "plain console"],
      ["[stowage] through Stowage's default", { key: "a" }],
      ["[stowage] no details"],
    ]);
  });
});
