import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import {
  assertProjectKey,
  claudeProjectKey,
  MAX_PROJECT_KEY_PREFIX,
  sanitizeProjectPath,
} from "../../src/claude/project-key.js";

const base = await tempDirectory("stowage-project-key-");

describe("sanitizeProjectPath", () => {
  it("replaces every character outside [a-zA-Z0-9] with -, not only slashes", () => {
    expect(sanitizeProjectPath("/workspace")).toBe("-workspace");
    expect(sanitizeProjectPath("/Users/me/my_project.v2/src dir")).toBe("-Users-me-my-project-v2-src-dir");
    // One dash per UTF-16 code unit, as Claude Code's regex (no `u` flag) does: é is 1, 😀 is 2.
    expect(sanitizeProjectPath("/a/é😀")).toBe("-a----");
    expect(sanitizeProjectPath("C:\\Users\\me")).toBe("C--Users-me");
  });

  it("keeps paths of exactly 200 sanitized characters whole", () => {
    const path = `/${"a".repeat(MAX_PROJECT_KEY_PREFIX - 1)}`;
    expect(sanitizeProjectPath(path)).toBe(`-${"a".repeat(199)}`);
  });

  it("cuts longer paths to 200 characters plus - and the base-36 hash Claude Code computes", () => {
    // Vectors computed with the hash function shipped in @anthropic-ai/claude-agent-sdk 0.3.330.
    const long = `/workspace/${"very-long-directory-name_".repeat(10)}/проект/😀`;
    expect(sanitizeProjectPath(long)).toBe(
      "-workspace-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-dire-70bk98",
    );
    const key = sanitizeProjectPath(`/${"x".repeat(300)}`);
    expect(key.slice(0, 200)).toBe(`-${"x".repeat(199)}`);
    expect(key).toMatch(/^-x{199}-[0-9a-z]+$/);
  });

  it("rejects an empty or non-string path", async () => {
    for (const value of ["", undefined, 42]) {
      await expectStowageError(() => sanitizeProjectPath(value as string), "INVALID_INPUT");
    }
  });
});

describe("claudeProjectKey", () => {
  it("resolves symlinks before sanitizing, as Claude Code does", async () => {
    const real = join(base, "real_project");
    const link = join(base, "link.to.project");
    await mkdir(real);
    await symlink(real, link);
    expect(await claudeProjectKey(link)).toBe(sanitizeProjectPath(real));
    expect(await claudeProjectKey(real)).toBe(sanitizeProjectPath(real));
  });

  it("uses the absolute path as given when it does not exist", async () => {
    expect(await claudeProjectKey("/no/such/dir_here")).toBe("-no-such-dir-here");
  });

  it("rejects an empty path or one with NUL", async () => {
    for (const cwd of ["", "/a\u0000b", 7]) {
      await expectStowageError(claudeProjectKey(cwd as string), "INVALID_INPUT");
    }
  });
});

describe("assertProjectKey", () => {
  it("accepts what the sanitizer produces and nothing else", async () => {
    expect(() => assertProjectKey("-workspace-app")).not.toThrow();
    for (const value of ["", "../x", "a/b", "a.b", "a\u0000", "x".repeat(256), 5]) {
      await expectStowageError(() => assertProjectKey(value), "INVALID_INPUT");
    }
  });
});
