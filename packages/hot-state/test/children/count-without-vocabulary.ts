// Imports hot-state, builds a hot state with the heuristic counter, then counts exactly; prints
// which of those steps loaded gpt-tokenizer (through ESM resolution or require).
import { createRequire } from "node:module";
import { installedPackages, recordResolvedModules } from "@stowage/test-support";

const stopRecording = recordResolvedModules();
const require = createRequire(import.meta.url);
const loadedByRequire = () => Object.keys(require.cache).some((path) => path.includes("gpt-tokenizer"));

const { buildHotState, countTokensExact, countTokensHeuristic } = await import("@stowage/hot-state");
buildHotState({ session_id: "s1", objective: "lazy vocabulary" }, { countTokens: countTokensHeuristic });
const resolvedBefore = installedPackages(await stopRecording()).includes("gpt-tokenizer");
const requiredBefore = loadedByRequire();
const exact = countTokensExact("hello world");
console.log(JSON.stringify({ resolvedBefore, requiredBefore, requiredAfter: loadedByRequire(), exact }));
