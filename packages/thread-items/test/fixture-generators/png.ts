import { deflateSync } from "node:zlib";
import type { Prng } from "./prng.js";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A real, decodable RGB PNG of a "screenshot": light bands with noisy text-like rows, so that it
 * compresses about as badly as a real one. Returns its base64.
 */
export function screenshotPng(random: Prng, width: number, height: number): string {
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    const textRow = y % 14 > 3 && y % 14 < 11;
    for (let x = 0; x < width; x++) {
      const ink = textRow && x > 8 && x < width - 20 && random.chance(0.35);
      const base = ink ? random.int(20, 90) : 235 + random.int(0, 12);
      row[1 + x * 3] = base;
      row[2 + x * 3] = base + (ink ? 0 : random.int(0, 8));
      row[3 + x * 3] = Math.min(255, base + (ink ? random.int(0, 40) : 4));
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", new Uint8Array(0)),
  ]);
  return png.toString("base64");
}
