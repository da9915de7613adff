import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import {
  agentOutputIdProblem,
  assertArtifactId,
  MAX_AGENT_OUTPUT_ID_LENGTH,
  MAX_TOOL_TYPE_LENGTH,
  parseAgentOutputFileName,
  parseArtifactFileName,
  sanitizeAgentName,
  sanitizeToolType,
} from "../../src/layout/names.js";

describe("sanitizeToolType", () => {
  it.each([
    ["bash", "bash"],
    ["python_3-x", "python_3-x"],
    ["mcp/server/tool", "mcp_server_tool"],
    ["../../etc/passwd", "etc_passwd"],
    ["a.b", "a_b"],
    ["bash\u0000", "bash"],
    ["  spaced  name ", "spaced_name"],
    ["ツール", "tool"],
    ["", "tool"],
    ["...", "tool"],
    [undefined, "tool"],
    [42, "tool"],
  ])("%j becomes %j", (input, expected) => {
    expect(sanitizeToolType(input)).toBe(expected);
  });

  it("caps the length", () => {
    expect(sanitizeToolType("x".repeat(10_000))).toBe("x".repeat(MAX_TOOL_TYPE_LENGTH));
  });

  it("sanitizes agent names the same way, with its own fallback", () => {
    expect(sanitizeAgentName("Explore.Child/../x")).toBe("Explore_Child_x");
    expect(sanitizeAgentName("%2e%2e")).toBe("2e_2e");
    expect(sanitizeAgentName("")).toBe("agent");
  });
});

describe("artifact ids", () => {
  it.each(["0", "1", "42", "9007199254740991", 7])("accepts %j", (value) => {
    expect(assertArtifactId(value)).toBe(String(value));
  });

  it.each([
    "",
    "-1",
    "01",
    "1.5",
    "1e3",
    "0x10",
    " 1",
    "1 ",
    "+1",
    "9007199254740992",
    "99999999999999999999999",
    "../x",
    "1/../../etc",
    "%2e%2e",
    "1\u0000",
    "/etc/passwd",
    -1,
    1.5,
    Number.NaN,
    null,
  ])("rejects %j", async (value) => {
    await expectStowageError(() => assertArtifactId(value), "INVALID_INPUT", "INVALID_ARTIFACT_ID");
  });

  it("parses artifact file names exactly", () => {
    expect(parseArtifactFileName("3.bash.log")).toEqual({ id: 3, toolType: "bash", complete: true });
    expect(parseArtifactFileName("3.bash.log.partial")).toEqual({ id: 3, toolType: "bash", complete: false });
    // Other tools write dotted tool types; the id is everything before the first dot.
    expect(parseArtifactFileName("9.mcp.server.log")).toEqual({
      id: 9,
      toolType: "mcp.server",
      complete: true,
    });
    expect(parseArtifactFileName("3.a.b.log.partial")).toEqual({ id: 3, toolType: "a.b", complete: false });
    expect(parseArtifactFileName("3.x.log.log")).toEqual({ id: 3, toolType: "x.log", complete: true });
    for (const name of [
      "03.bash.log",
      "3.log",
      "3..log",
      "3.a\nb.log",
      "3.a\u0000.log",
      "3.bash.log.tmp",
      "x.bash.log",
      "3-x.md",
      ".3.bash.log",
    ]) {
      expect(parseArtifactFileName(name)).toBeUndefined();
    }
  });
});

describe("agent output ids", () => {
  it.each(["0-Explore", "12-a_b-c", "0-Parent.1-Child", "0-a.0-b.7-c"])("accepts %j", (id) => {
    expect(agentOutputIdProblem(id)).toBeUndefined();
    expect(parseAgentOutputFileName(`${id}.md`)).toBe(id);
  });

  it.each([
    "",
    "Explore",
    "0",
    "0-",
    "-x",
    "01-x",
    "0-a.",
    ".0-a",
    "0-a..1-b",
    "0-a/1-b",
    "../0-a",
    "%2e%2e",
    "0-a\u0000",
    "0-a b",
    "99999999999999999-x",
    `0-${"x".repeat(MAX_AGENT_OUTPUT_ID_LENGTH)}`,
    7,
  ])("rejects %j", (id) => {
    expect(agentOutputIdProblem(id)).toBeTypeOf("string");
  });

  it("ignores other files", () => {
    expect(parseAgentOutputFileName("0-x.md.tmp")).toBeUndefined();
    expect(parseAgentOutputFileName("3.bash.log")).toBeUndefined();
  });
});
