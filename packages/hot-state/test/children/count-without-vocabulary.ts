// Imports hot-state, builds a hot state with a counter of its own, then counts exactly; prints
// which of those steps loaded gpt-tokenizer (through ESM resolution or require).
import { createRequire } from "node:module";
import { installedPackages, recordResolvedModules } from "@stowage/test-support";

const stopRecording = recordResolvedModules();
const require = createRequire(import.meta.url);
const loadedByRequire = () => Object.keys(require.cache).some((path) => path.includes("gpt-tokenizer"));

const { buildHotState, countTokensExact } = await import("@stowage/hot-state");
const charsOver4 = (text: string) => Math.ceil(text.length / 4);
buildHotState({ session_id: "s1", objective: "lazy vocabulary" }, { countTokens: charsOver4 });
const resolvedBefore = installedPackages(await stopRecording()).includes("gpt-tokenizer");
const requiredBefore = loadedByRequire();
const exact = countTokensExact("hello world");
console.log(JSON.stringify({ resolvedBefore, requiredBefore, requiredAfter: loadedByRequire(), exact }));
