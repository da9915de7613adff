import { describe, expect, it } from "vitest";
import { unpinnedPeers } from "../src/peer-pins.ts";
import type { PublishedPackage } from "../src/published-packages.ts";
import { scanReadme } from "../src/scan-readme.ts";

const fence = "```";
const packages: PublishedPackage[] = [
  { name: "@stowage/pg", dir: "/x", readme: "/x/README.md", peerDependencies: { "drizzle-orm": "^0.45.0" } },
];
const installing = (line: string) => scanReadme(`${fence}sh\n${line}\n${fence}\n`);

describe("unpinnedPeers", () => {
  it("asks for a range on a peer installed bare", () => {
    expect(unpinnedPeers(installing("npm install @stowage/pg drizzle-orm"), packages)).toEqual([
      "installs drizzle-orm without a version, but @stowage/pg takes it as a peer at ^0.45.0: pin it",
    ]);
  });

  it("accepts a pinned peer, our own packages and packages no one takes as a peer", () => {
    expect(unpinnedPeers(installing("npm install @stowage/pg drizzle-orm@^0.45 hono"), packages)).toEqual([]);
  });
});
