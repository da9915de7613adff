import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { StowageError } from "@stowage/core";

/** LangGraph's checkpoint library, an optional peer: its serializer, constants and comparators. */
const PEER = "@langchain/langgraph-checkpoint";

export type LangGraphCheckpoint = typeof import("@langchain/langgraph-checkpoint");

let loaded: Promise<LangGraphCheckpoint> | undefined;

/**
 * `@langchain/langgraph-checkpoint`, imported on first use (the application's own copy, so that
 * its serializer is the one its graphs use). Missing: UNAVAILABLE with reason PEER_MISSING. A saver
 * is built without it, so that a deployment's table opens one for every principal whether or not
 * the deployment runs LangGraph.
 */
export function loadLangGraph(): Promise<LangGraphCheckpoint> {
  loaded ??= import(PEER).then(
    (module: LangGraphCheckpoint) => module,
    (cause: unknown) => {
      loaded = undefined;
      throw new StowageError(
        "UNAVAILABLE",
        `${PEER} is not installed; add it to your dependencies to use a LangGraph checkpoint saver`,
        { cause, reason: "PEER_MISSING" },
      );
    },
  );
  return loaded;
}

/** LangGraph's own `JsonPlusSerializer`, made on first use. */
export function lazySerializer(): SerializerProtocol {
  let serializer: Promise<SerializerProtocol> | undefined;
  const get = () => {
    serializer ??= loadLangGraph().then((module) => new module.JsonPlusSerializer());
    return serializer;
  };
  return {
    dumpsTyped: async (value) => (await get()).dumpsTyped(value),
    loadsTyped: async (type, data) => (await get()).loadsTyped(type, data),
  };
}
