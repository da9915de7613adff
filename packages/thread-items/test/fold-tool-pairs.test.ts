import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { statusItem, textItem, toolCallItem, toolResultItem } from "../src/builders/build-items.js";
import { foldToolPairs } from "../src/fold-tool-pairs.js";
import type { ThreadItem } from "../src/schema/thread-item-schema.js";

const call = (id: string, name = "Bash") => toolCallItem({ name, invocationId: id, input: { command: id } });
const result = (id: string) => toolResultItem({ invocationId: id, output: `out ${id}` });

describe("foldToolPairs", () => {
  it("folds each call with its result by invocation_id, taking the name from the call", () => {
    const hello = textItem("hello");
    const items = [
      hello,
      call("a"),
      call("b", "Read"),
      result("b"),
      result("a"),
      statusItem({ status: "done" }),
    ];
    const folded = foldToolPairs(items);
    expect(
      folded.map((entry) =>
        entry.kind === "tool" ? `${entry.name}:${entry.invocationId}` : entry.item.metadata?.type,
      ),
    ).toEqual(["text", "Bash:a", "Read:b", "status"]);
    expect(folded[1]).toEqual({
      kind: "tool",
      invocationId: "a",
      name: "Bash",
      call: items[1],
      result: items[4],
    });
    expect(folded[2]).toMatchObject({ call: items[2], result: items[3] });
  });

  it("keeps a call still running and a result whose call was never seen", () => {
    const folded = foldToolPairs([call("running"), result("orphan")]);
    expect(folded).toEqual([
      { kind: "tool", invocationId: "running", name: "Bash", call: expect.anything(), result: undefined },
      { kind: "tool", invocationId: "orphan", name: undefined, call: undefined, result: expect.anything() },
    ]);
  });

  it("pairs a result that arrives before its call at the place of the result", () => {
    const folded = foldToolPairs([result("x"), textItem("between"), call("x", "Grep")]);
    expect(folded).toHaveLength(2);
    expect(folded[0]).toMatchObject({ kind: "tool", name: "Grep", invocationId: "x" });
  });

  it("pairs repeated invocation ids oldest first", () => {
    const items = [call("dup"), call("dup"), result("dup"), result("dup"), result("dup")];
    const folded = foldToolPairs(items);
    expect(folded).toHaveLength(3);
    expect(folded[0]).toMatchObject({ call: items[0], result: items[2] });
    expect(folded[1]).toMatchObject({ call: items[1], result: items[3] });
    expect(folded[2]).toMatchObject({ call: undefined, result: items[4] });
  });

  it("passes through items that only look like tool items", () => {
    const odd = {
      content: [{ type: "text", text: "x" }],
      metadata: { type: "tool_call", tool: { name: "a", invocation_id: "" } },
    };
    expect(foldToolPairs([odd as ThreadItem])).toEqual([{ kind: "item", item: odd }]);
  });

  it("rejects something that is not an array", async () => {
    await expectStowageError(() => foldToolPairs("items" as never), "INVALID_INPUT");
  });
});
