import { createMemoryNotifier } from "../src/notifier.js";
import { describeNotifierConformance } from "../src/testing/notifier-conformance.js";

describeNotifierConformance({ name: "memory notifier", createNotifier: () => createMemoryNotifier() });
