import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { StowageError } from "../src/errors.js";
import { fromSystemError } from "../src/system-errors.js";

const failureOf = (operation: () => Promise<unknown>) =>
  operation().then(
    () => {
      throw new Error("expected a failure");
    },
    (err: unknown) => err,
  );

describe("fromSystemError", () => {
  it("maps real file-system failures to codes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "stowage-errors-"));
    try {
      await writeFile(join(dir, "file"), "x");
      const cases: [() => Promise<unknown>, string][] = [
        [() => readFile(join(dir, "missing")), "NOT_FOUND"],
        [() => open(join(dir, "file"), "wx"), "ALREADY_EXISTS"],
        [() => readFile(dir), "CONFLICT"],
        [() => writeFile(join(dir, "file", "child"), "x"), "CONFLICT"],
        [() => readFile(join(dir, "n".repeat(300))), "INVALID_INPUT"],
      ];
      for (const [operation, code] of cases) {
        const mapped = fromSystemError(await failureOf(operation), "test op");
        expect(mapped.code).toBe(code);
        expect(mapped.message.startsWith("test op: ")).toBe(true);
        expect(mapped.cause).toBeInstanceOf(Error);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("maps errno codes without a real syscall", () => {
    const errno = (code: string) => Object.assign(new Error(code), { code });
    expect(fromSystemError(errno("ENOSPC"), "x").code).toBe("STORAGE_FULL");
    expect(fromSystemError(errno("EACCES"), "x").code).toBe("FORBIDDEN");
    expect(fromSystemError(errno("EMFILE"), "x").code).toBe("UNAVAILABLE");
    expect(fromSystemError(errno("EWHATEVER"), "x").code).toBe("INTERNAL");
    expect(fromSystemError(errno("ENOSPC"), "x").reason).toBe("ENOSPC");
  });

  it("passes StowageErrors through and maps aborts", () => {
    const original = new StowageError("CONFLICT", "x");
    expect(fromSystemError(original, "ctx")).toBe(original);
    const abort = new DOMException("stop", "AbortError");
    expect(fromSystemError(abort, "ctx").code).toBe("ABORTED");
    expect(fromSystemError("a string", "ctx").code).toBe("INTERNAL");
  });
});
