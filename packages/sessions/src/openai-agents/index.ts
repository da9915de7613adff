// `@stowage/sessions/openai-agents`: the OpenAI Agents SDK's `Session` over any ObjectStore.
// `@openai/agents-core` (an optional peer) is needed for its types only.
export {
  createObjectAgentsSession,
  type ObjectAgentsSessionOptions,
} from "./create-object-agents-session.js";
export { deleteObjectAgentsSession } from "./delete-object-agents-session.js";
