import { describe, expect, it } from "vitest";
import { formatSize } from "../src/format-size.js";

describe("formatSize", () => {
  it.each([
    [0, "0 B"],
    [512, "512 B"],
    [1023, "1023 B"],
    [1024, "1.0 KiB"],
    [1536, "1.5 KiB"],
    [1_048_575, "1.0 MiB"],
    [1_048_576, "1.0 MiB"],
    [50 * 1_048_576, "50.0 MiB"],
    [1.5 * 1024 ** 3, "1.5 GiB"],
    [3 * 1024 ** 4, "3.0 TiB"],
    [5000 * 1024 ** 4, "5000.0 TiB"],
    [-5, "0 B"],
    [Number.NaN, "0 B"],
  ])("%d bytes read %j", (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });
});
