import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { MAX_INTERNAL_URL_LENGTH, parseInternalUrl } from "../../src/urls/internal-url.js";

describe("parseInternalUrl", () => {
  it.each([
    ["artifact://0", { scheme: "artifact", id: "0" }],
    ["artifact://123", { scheme: "artifact", id: "123" }],
    ["agent://0-Explore", { scheme: "agent", id: "0-Explore" }],
    ["agent://0-P.1-C", { scheme: "agent", id: "0-P.1-C" }],
    ["agent://0-x/a/b/0", { scheme: "agent", id: "0-x", path: ["a", "b", "0"] }],
    ["agent://0-x/a%2Fb/%2e%2e", { scheme: "agent", id: "0-x", path: ["a/b", ".."] }],
    ["agent://0-x?q=.a.b[0]", { scheme: "agent", id: "0-x", query: ".a.b[0]" }],
    ["agent://0-x?q=.%5B%22k%20y%22%5D", { scheme: "agent", id: "0-x", query: '.["k y"]' }],
  ])("parses %s", (url, parsed) => {
    expect(parseInternalUrl(url)).toEqual(parsed);
  });

  it.each([
    ["artifact://../x", "INVALID_ARTIFACT_ID"],
    ["artifact://1/../../etc", "INVALID_ARTIFACT_ID"],
    ["artifact://%2e%2e", "INVALID_ARTIFACT_ID"],
    ["artifact://1%00", "INVALID_ARTIFACT_ID"],
    ["artifact://1\u0000", "INVALID_ARTIFACT_ID"],
    ["artifact:///etc/passwd", "INVALID_ARTIFACT_ID"],
    ["artifact://99999999999999999999999", "INVALID_ARTIFACT_ID"],
    ["artifact://9007199254740992", "INVALID_ARTIFACT_ID"],
    ["artifact://-1", "INVALID_ARTIFACT_ID"],
    ["artifact://01", "INVALID_ARTIFACT_ID"],
    ["artifact://1?x=1", "INVALID_ARTIFACT_ID"],
    ["artifact://1#x", "INVALID_ARTIFACT_ID"],
    ["artifact://", "INVALID_ARTIFACT_ID"],
    ["agent://../x", "INVALID_AGENT_OUTPUT_ID"],
    ["agent://%2e%2e", "INVALID_AGENT_OUTPUT_ID"],
    ["agent:///etc/passwd", "INVALID_AGENT_OUTPUT_ID"],
    ["agent://0-x\u0000", "INVALID_AGENT_OUTPUT_ID"],
    ["agent://0-x%2F..%2F..", "INVALID_AGENT_OUTPUT_ID"],
    ["agent://x", "INVALID_AGENT_OUTPUT_ID"],
    ["agent://", "INVALID_AGENT_OUTPUT_ID"],
    ["agent://0-x/a?q=.a", "PATH_AND_QUERY"],
    ["agent://0-x//a", "INVALID_URL"],
    ["agent://0-x/", "INVALID_URL"],
    ["agent://0-x/%zz", "INVALID_URL"],
    ["agent://0-x?q=.a&q=.b", "INVALID_URL"],
    ["agent://0-x?x=1", "INVALID_URL"],
    ["agent://0-x?q", "INVALID_URL"],
    ["agent://0-x#frag", "INVALID_URL"],
    ["file:///etc/passwd", "INVALID_URL"],
    ["ARTIFACT://1", "INVALID_URL"],
    ["/etc/passwd", "INVALID_URL"],
    [`agent://0-x/${"a/".repeat(MAX_INTERNAL_URL_LENGTH)}`, "INVALID_URL"],
    [42, "INVALID_URL"],
    [null, "INVALID_URL"],
  ])("rejects %j", async (url, reason) => {
    await expectStowageError(() => parseInternalUrl(url), "INVALID_INPUT", reason);
  });

  // The model reads this text and the design document fixes it, so it is asserted word for word.
  it("quotes the spec's message for a non-numeric artifact id", async () => {
    expect(
      (await expectStowageError(() => parseInternalUrl("artifact://abc"), "INVALID_INPUT")).message,
    ).toMatch(/^artifact:\/\/ ID must be numeric.*got: "abc"$/);
  });
});
