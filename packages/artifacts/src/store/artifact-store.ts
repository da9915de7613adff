import { join, resolve } from "node:path";
import {
  consoleLogger,
  describeValue,
  fromSystemError,
  isReadableStream,
  type Logger,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { writeFileAtomic } from "@stowage/core/fs";
import { SessionIds } from "../ids/session-ids.js";
import { type DirectoryAccess, directoryAccess } from "../layout/directory-access.js";
import {
  AGENT_OUTPUT_EXTENSION,
  agentOutputIdProblem,
  assertAgentOutputId,
  MAX_AGENT_OUTPUT_ID_LENGTH,
  MAX_ARTIFACT_ID,
  sanitizeAgentName,
  sanitizeToolType,
} from "../layout/names.js";
import { artifactsDirFor } from "../layout/session-dir.js";
import type { ByteRangeOptions } from "../read/read-options.js";
import { type ArtifactWriter, openArtifactWriter } from "./artifact-writer.js";
import {
  type AgentOutputRead,
  type AgentOutputReadOptions,
  listAgentOutputIds,
  readAgentOutput,
} from "./read-agent-output.js";
import {
  type ArtifactEntry,
  type ArtifactRead,
  type ArtifactReadOptions,
  createArtifactListing,
  listArtifactEntries,
  readArtifact,
} from "./read-artifact.js";
import {
  type ArtifactByteRangeOptions,
  type ByteRangeRead,
  readAgentOutputBytes,
  readArtifactBytes,
} from "./read-bytes.js";

/**
 * Whether artifacts and agent outputs are fsynced before they are published. Off by default: a
 * crashed process never exposes a partial file either way (files are published by rename), and
 * flushing every multi-megabyte tool log to disk costs more than losing it to a power cut.
 */
export const DEFAULT_FSYNC = false;

export interface ArtifactStoreOptions {
  /** The session file (`…/<timestamp>_<sessionId>.jsonl`); the store uses the directory it owns. */
  sessionFile?: string;
  /** Or the artifacts directory itself (a temp directory for a run without a session file). */
  dir?: string;
  /** fsync each artifact and agent output (and its directory) before publishing it. Default false. */
  fsync?: boolean;
  /** Receives warnings. Default `consoleLogger`. */
  logger?: Logger;
}

export interface AgentOutputAllocation {
  /** `<index>-<requestedId>`, nested as `<parentPrefix>.<index>-<requestedId>`. */
  outputId: string;
  /** Where `writeAgentOutput(outputId, …)` puts it: `<dir>/<outputId>.md`. */
  path: string;
}

type OperationOptions = { signal?: AbortSignal };

/** The artifacts of one session: allocation, writing and reading of tool and agent outputs. */
export interface ArtifactStore {
  /** The artifacts directory (absolute); created on the first allocation. */
  readonly dir: string;
  /** Receives the store's warnings. */
  readonly logger: Logger;
  /**
   * Allocates the next artifact id (unique across processes) and opens
   * `<id>.<toolType>.log.partial` for writing; `publish()` makes it `<id>.<toolType>.log`.
   */
  openArtifactWriter(toolType: string, options?: OperationOptions): Promise<ArtifactWriter>;
  /** Writes a whole tool output as a new artifact and returns its id. */
  saveArtifact(
    toolType: string,
    body: Uint8Array | string | ReadableStream<Uint8Array>,
    options?: OperationOptions,
  ): Promise<string>;
  /**
   * Allocates an agent output id `<index>-<requestedId>` (under `parentPrefix` when given):
   * `requestedId` is sanitized, the index continues after the highest one present and is unique
   * across processes.
   */
  allocateAgentOutput(
    requestedId: string,
    options?: OperationOptions & { parentPrefix?: string },
  ): Promise<AgentOutputAllocation>;
  /** Writes `<outputId>.md` atomically (a reader sees the old content or the new, never a part). */
  writeAgentOutput(
    outputId: string,
    body: Uint8Array | string | ReadableStream<Uint8Array>,
    options?: OperationOptions,
  ): Promise<void>;
  listArtifacts(options?: OperationOptions): Promise<ArtifactEntry[]>;
  listAgentOutputs(options?: OperationOptions): Promise<string[]>;
  readArtifact(id: string | number, options?: ArtifactReadOptions): Promise<ArtifactRead>;
  readAgentOutput(id: string, options?: AgentOutputReadOptions): Promise<AgentOutputRead>;
  /** Raw bytes of `artifact://<id>` from `start`, as the tool wrote them (neither decoded nor sanitized). */
  readArtifactBytes(id: string | number, options?: ArtifactByteRangeOptions): Promise<ByteRangeRead>;
  /** Raw bytes of `agent://<id>` from `start`. */
  readAgentOutputBytes(id: string, options?: ByteRangeOptions): Promise<ByteRangeRead>;
}

function resolveDir(options: ArtifactStoreOptions): DirectoryAccess {
  if (options.sessionFile !== undefined && options.dir !== undefined) {
    throw new StowageError("INVALID_INPUT", "createArtifactStore: give sessionFile or dir, not both");
  }
  if (options.sessionFile !== undefined) {
    return directoryAccess(artifactsDirFor(options.sessionFile), { derived: true });
  }
  if (typeof options.dir !== "string" || options.dir.length === 0 || options.dir.includes("\u0000")) {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactStore: sessionFile or dir (a non-empty path) is required, got dir ${describeValue(options.dir)}`,
    );
  }
  return directoryAccess(resolve(options.dir), { derived: false });
}

const MAX_INDEX_DIGITS = String(MAX_ARTIFACT_ID).length;

type Body = Uint8Array | string | ReadableStream<Uint8Array>;

function assertBody(body: unknown, what: string): asserts body is Body {
  if (typeof body !== "string" && !(body instanceof Uint8Array) && !isReadableStream(body)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a Uint8Array, a string or a ReadableStream<Uint8Array>, got ${describeValue(body)}`,
    );
  }
}

/** Opens the artifacts of a session (by its session file) or of a directory. Nothing is created until the first write. */
export function createArtifactStore(options: ArtifactStoreOptions): ArtifactStore {
  if (typeof options !== "object" || options === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactStore: options are required, got ${describeValue(options)}`,
    );
  }
  return openArtifactStore(resolveDir(options), options);
}

/**
 * The artifact store of a directory reached through `access` (session files open their sessions'
 * artifacts below a root this way, never following a link between the root and them).
 */
export function openArtifactStore(
  access: DirectoryAccess,
  options: Pick<ArtifactStoreOptions, "fsync" | "logger">,
): ArtifactStore {
  const { dir } = access;
  if (options.fsync !== undefined && typeof options.fsync !== "boolean") {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactStore: fsync must be a boolean, got ${describeValue(options.fsync)}`,
    );
  }
  const fsync = options.fsync ?? DEFAULT_FSYNC;
  const logger = options.logger ?? consoleLogger;
  const ids = new SessionIds(access);
  const artifactListing = createArtifactListing();

  const store: ArtifactStore = {
    dir,
    logger,

    async openArtifactWriter(toolType, operation = {}) {
      const id = await ids.nextArtifactId(operation.signal);
      const directory = access.open(true)!;
      return openArtifactWriter(directory, dir, id, sanitizeToolType(toolType), fsync);
    },

    async saveArtifact(toolType, body, operation = {}) {
      assertBody(body, "artifact body");
      const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
      const writer = await store.openArtifactWriter(toolType, operation);
      try {
        if (bytes instanceof Uint8Array) {
          await writer.write(bytes, operation);
        } else {
          const reader = bytes.getReader();
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) break;
              if (!(value instanceof Uint8Array)) {
                throw new StowageError("INVALID_INPUT", "artifact stream chunks must be Uint8Array");
              }
              await writer.write(value, operation);
            }
          } catch (err) {
            await reader.cancel(err).catch(() => {});
            throw err;
          } finally {
            reader.releaseLock();
          }
        }
        await writer.publish(operation);
        return writer.id;
      } catch (err) {
        await writer.abandon();
        throw fromSystemError(err, `save artifact ${writer.id}`);
      }
    },

    async allocateAgentOutput(requestedId, operation = {}) {
      const parentPrefix = operation.parentPrefix ?? "";
      if (parentPrefix !== "") {
        const problem = agentOutputIdProblem(parentPrefix);
        if (problem) {
          throw new StowageError(
            "INVALID_INPUT",
            `parentPrefix ${problem}, got ${describeValue(parentPrefix)}`,
            {
              reason: "INVALID_AGENT_OUTPUT_ID",
            },
          );
        }
      }
      const name = sanitizeAgentName(requestedId);
      // Checked with the longest possible index, so that a deep nesting never fails only later.
      const longest = (parentPrefix ? parentPrefix.length + 1 : 0) + MAX_INDEX_DIGITS + 1 + name.length;
      if (longest > MAX_AGENT_OUTPUT_ID_LENGTH) {
        throw new StowageError(
          "INVALID_INPUT",
          `agent output id under ${describeValue(parentPrefix)} would exceed ${MAX_AGENT_OUTPUT_ID_LENGTH} characters; nest less deeply or use a shorter name`,
          { reason: "AGENT_OUTPUT_ID_TOO_LONG", details: { limit: MAX_AGENT_OUTPUT_ID_LENGTH } },
        );
      }
      const index = await ids.nextAgentIndex(parentPrefix, operation.signal);
      const outputId = `${parentPrefix ? `${parentPrefix}.` : ""}${index}-${name}`;
      return { outputId, path: join(dir, `${outputId}${AGENT_OUTPUT_EXTENSION}`) };
    },

    async writeAgentOutput(outputId, body, operation = {}) {
      const id = assertAgentOutputId(outputId, "agent output id");
      assertBody(body, "agent output body");
      await access.use(true, (path) =>
        writeFileAtomic(`${path}/${id}${AGENT_OUTPUT_EXTENSION}`, body, {
          fsync,
          ...(operation.signal ? { signal: operation.signal } : {}),
        }),
      );
    },

    async listArtifacts(operation = {}) {
      throwIfAborted(operation.signal, "list artifacts");
      return (await access.use(false, listArtifactEntries)) ?? [];
    },
    async listAgentOutputs(operation = {}) {
      throwIfAborted(operation.signal, "list agent outputs");
      return (await access.use(false, listAgentOutputIds)) ?? [];
    },
    readArtifact: (id, readOptions) =>
      access.locate((location) => readArtifact(location, id, readOptions, artifactListing)),
    readAgentOutput: (id, readOptions) =>
      access.locate((location) => readAgentOutput(location, id, readOptions)),
    readArtifactBytes: (id, rangeOptions = {}) =>
      access.locate((location) => readArtifactBytes(location, id, rangeOptions, artifactListing)),
    readAgentOutputBytes: (id, rangeOptions = {}) =>
      access.locate((location) => readAgentOutputBytes(location, id, rangeOptions)),
  };
  return store;
}
