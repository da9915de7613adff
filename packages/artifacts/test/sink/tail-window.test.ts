import { describe, expect, it } from "vitest";
import { TailWindow } from "../../src/sink/tail-window.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("TailWindow", () => {
  it("keeps everything while under capacity", () => {
    const tail = new TailWindow(10);
    tail.append(bytes("abc"));
    tail.append(bytes("def"));
    expect(tail.text()).toBe("abcdef");
  });

  it("keeps the last capacity bytes across chunk boundaries", () => {
    const tail = new TailWindow(5);
    for (const part of ["hello ", "wor", "ld", "!"]) tail.append(bytes(part));
    expect(tail.text()).toBe("orld!");
  });

  it("starts the text at a UTF-8 character boundary", () => {
    const tail = new TailWindow(5);
    tail.append(bytes("ab"));
    tail.append(bytes("é€x")); // é = 2 bytes, € = 3 bytes: the window starts inside é
    expect(tail.text()).toBe("€x");
    const emoji = new TailWindow(6);
    emoji.append(bytes("😀😀"));
    expect(emoji.text()).toBe("😀");
  });

  it("joins a character split across chunks", () => {
    const tail = new TailWindow(100);
    const euro = bytes("€");
    tail.append(euro.subarray(0, 1));
    tail.append(euro.subarray(1));
    expect(tail.text()).toBe("€");
  });

  it("does not retain a huge chunk, only a copy of its tail", () => {
    const tail = new TailWindow(8);
    const huge = bytes(`${"x".repeat(1000)}12345678`);
    tail.append(huge);
    const held = tail.chunks();
    expect(held).toHaveLength(1);
    expect(held[0]!.buffer).not.toBe(huge.buffer);
    expect(held[0]!.buffer.byteLength).toBe(8);
    expect(tail.text()).toBe("12345678");
  });

  it("starts after an escape sequence that began before the window, however long ago", () => {
    const tail = new TailWindow(16);
    tail.append(bytes("\u001b]8;;https://x.test/"));
    for (let i = 0; i < 100; i++) tail.append(bytes("a-very-long-link-target/"));
    tail.append(bytes("\u001b\\link text"));
    expect(tail.text()).toBe("link text");
  });

  it("knows the sequence state when one huge chunk replaces the window", () => {
    const tail = new TailWindow(8);
    tail.append(bytes("\u001b]0;"));
    tail.append(bytes(`${"t".repeat(100)}\u0007ok`));
    expect(tail.text()).toBe("ok");
    const open = new TailWindow(8);
    open.append(bytes("\u001b]0;"));
    open.append(bytes("t".repeat(100)));
    expect(open.text()).toBe(""); // all of it is the payload of a sequence not yet ended
  });

  it("holds less than five times its capacity whatever is pushed", () => {
    const tail = new TailWindow(1000);
    for (let i = 0; i < 10_000; i++) tail.append(new Uint8Array(1 + ((i * 7919) % 3999)));
    expect(tail.bytes).toBeLessThan(5 * 1000);
    expect(tail.bytes).toBeGreaterThanOrEqual(1000);
  });
});
