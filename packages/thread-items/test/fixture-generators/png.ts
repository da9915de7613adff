import { encodePng } from "@stowage/test-support";
import type { Prng } from "./prng.js";

/**
 * A real, decodable RGB PNG of a "screenshot": light bands with noisy text-like rows, so that it
 * compresses about as badly as a real one. Returns its base64.
 */
export function screenshotPng(random: Prng, width: number, height: number): string {
  const png = encodePng(width, height, (x, y) => {
    const textRow = y % 14 > 3 && y % 14 < 11;
    const ink = textRow && x > 8 && x < width - 20 && random.chance(0.35);
    const base = ink ? random.int(20, 90) : 235 + random.int(0, 12);
    const green = base + (ink ? 0 : random.int(0, 8));
    const blue = Math.min(255, base + (ink ? random.int(0, 40) : 4));
    return [base, green, blue];
  });
  return png.toString("base64");
}
