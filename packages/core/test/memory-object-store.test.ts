import { createMemoryObjectStore } from "../src/memory-object-store.js";
import { describeObjectStoreConformance } from "../src/testing/object-store-conformance.js";

describeObjectStoreConformance({
  name: "memory object store",
  createStore: () => createMemoryObjectStore(),
});
