import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { postgresOptionsFromEnv } from "../src/options-from-env.js";

describe("postgresOptionsFromEnv", () => {
  it("is undefined without DATABASE_URL (embedded PGlite), blank counting as unset", () => {
    expect(postgresOptionsFromEnv({})).toBeUndefined();
    expect(postgresOptionsFromEnv({ DATABASE_URL: "" })).toBeUndefined();
    expect(postgresOptionsFromEnv({ DATABASE_URL: "   " })).toBeUndefined();
  });

  it("reads DATABASE_URL and DATABASE_POOL_MAX", () => {
    expect(postgresOptionsFromEnv({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" })).toEqual({
      url: "postgres://postgres@127.0.0.1:5432/test",
    });
    expect(
      postgresOptionsFromEnv({
        DATABASE_URL: " postgresql://app:secret@db.internal/stowage?sslmode=require ",
        DATABASE_POOL_MAX: "20",
      }),
    ).toEqual({ url: "postgresql://app:secret@db.internal/stowage?sslmode=require", maxConnections: 20 });
  });

  it.each([
    ["another scheme", { DATABASE_URL: "mysql://app:hunter2@db/x" }],
    ["no scheme", { DATABASE_URL: "app:hunter2@127.0.0.1:5432/x" }],
    ["a bare word", { DATABASE_URL: "hunter2" }],
    ["a pool size of 0", { DATABASE_URL: "postgres://db/x", DATABASE_POOL_MAX: "0" }],
    ["a pool size in words", { DATABASE_URL: "postgres://db/x", DATABASE_POOL_MAX: "ten" }],
    ["a fractional pool size", { DATABASE_URL: "postgres://db/x", DATABASE_POOL_MAX: "1.5" }],
    ["a bad pool size even without a URL", { DATABASE_POOL_MAX: "-3" }],
  ])("refuses %s with INVALID_INPUT (INVALID_SETTING)", async (_why, env) => {
    const error = await expectStowageError(
      () => postgresOptionsFromEnv(env),
      "INVALID_INPUT",
      "INVALID_SETTING",
    );
    // A connection string may carry a password: it never reaches the message.
    expect(error.message).not.toContain("hunter2");
  });
});
