import { createMemoryObjectStore } from "./memory-object-store.js";
import { describeObjectStoreConformance } from "./testing/object-store-conformance.js";

describeObjectStoreConformance({
  name: "memory object store",
  createStore: () => createMemoryObjectStore(),
});
