import { createMemoryNotifier } from "./notifier.js";
import { describeNotifierConformance } from "./testing/notifier-conformance.js";

describeNotifierConformance({ name: "memory notifier", createNotifier: () => createMemoryNotifier() });
