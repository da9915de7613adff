import { join } from "node:path";
import { describeNotifierConformance } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { afterAll } from "vitest";
import { connectSocketNotifier, startNotifierHub } from "./support/socket-notifier.js";

// The cross-process feed tests trust this notifier, so it keeps the contract like any other.
const socketPath = join(await tempDirectory("stowage-socket-notifier-"), "hub.sock");
const hub = await startNotifierHub(socketPath);
afterAll(() => hub.close());

describeNotifierConformance({
  name: "socket notifier",
  createNotifier: () => connectSocketNotifier(socketPath),
});
