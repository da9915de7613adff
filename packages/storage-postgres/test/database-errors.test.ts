import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { fromDatabaseError, sqlStateOf } from "../src/database-errors.js";

const pgError = (code: string, message = "boom") => Object.assign(new Error(message), { code });

describe("fromDatabaseError", () => {
  it("maps SQLSTATEs, looking through drizzle's wrapper", () => {
    const cases: [string, string][] = [
      ["23505", "ALREADY_EXISTS"],
      ["23514", "INVALID_INPUT"],
      ["22001", "INVALID_INPUT"],
      ["08006", "UNAVAILABLE"],
      ["53100", "STORAGE_FULL"],
      ["53300", "UNAVAILABLE"],
      ["54000", "TOO_LARGE"],
      ["57014", "ABORTED"],
      ["57P01", "UNAVAILABLE"],
      ["40001", "CONFLICT"],
      ["40P01", "CONFLICT"],
      ["28P01", "UNAUTHORIZED"],
      ["42501", "FORBIDDEN"],
      ["42P01", "INTERNAL"],
      ["XX000", "INTERNAL"],
    ];
    for (const [state, code] of cases) {
      const wrapped = Object.assign(new Error("Failed query: ..."), { cause: pgError(state, "detail") });
      const mapped = fromDatabaseError(wrapped, "op");
      expect(mapped.code).toBe(code);
      expect(mapped.reason).toBe(state);
      expect(mapped.message).toMatch(/^op: detail/);
      expect(sqlStateOf(wrapped)).toBe(state);
    }
  });

  it("maps network errors through errno and passes StowageErrors through", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(fromDatabaseError(refused, "op").code).toBe("UNAVAILABLE");
    expect(fromDatabaseError(Object.assign(new Error("Failed query"), { cause: refused }), "op").code).toBe(
      "UNAVAILABLE",
    );
    const own = new StowageError("NOT_FOUND", "x");
    expect(fromDatabaseError(own, "op")).toBe(own);
    expect(fromDatabaseError("weird", "op").code).toBe("INTERNAL");
  });
});
