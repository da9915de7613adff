import {
  consoleLogger,
  describeValue,
  fromSystemError,
  type Logger,
  StowageError,
  sanitizeText,
} from "@stowage/core";
import type { ArtifactWriter } from "../store/artifact-writer.js";
import { TailWindow } from "./tail-window.js";

/** Output size past which a sink spills to an artifact file; also the size of the tail it keeps. */
export const DEFAULT_SPILL_BYTES = 50 * 1024;
/** The largest `spillBytes` accepted: the tail (up to five times this) is held in memory. */
const MAX_SPILL_BYTES = 8 * 1024 * 1024;
/**
 * Bytes queued for the artifact file at which `push()` stops resolving at once and waits for the
 * disk (backpressure). The queue is handed to one write system call at a time, so the producer
 * fills the next batch while the previous one is written: at most about twice this is held.
 */
export const SINK_HIGH_WATER_BYTES = 1024 * 1024;
/**
 * Bytes already waiting for the artifact file when another chunk arrives at which the producer
 * is taken to ignore backpressure (an awaited `push()` never lets more than
 * {@link SINK_HIGH_WATER_BYTES} wait): the artifact is given up (`artifactError`, reason
 * `BACKPRESSURE_IGNORED`) so that memory stays bounded.
 */
export const MAX_SINK_BUFFERED_BYTES = 64 * 1024 * 1024;

/** Where a sink spills: an `ArtifactStore`, or anything that opens an artifact writer. */
export interface ArtifactWriterSource {
  openArtifactWriter(toolType: string, options?: { signal?: AbortSignal }): Promise<ArtifactWriter>;
}

export interface OutputSinkOptions {
  /** Where the full output goes once it passes `spillBytes`; without it the sink keeps the tail only. */
  artifacts?: ArtifactWriterSource | undefined;
  /** The tool's name, sanitized into `<id>.<toolType>.log`. Default `"tool"`. */
  toolType?: string;
  /** Spill threshold and tail size in bytes; default 51,200 (50 KiB), at most 8 MiB. */
  spillBytes?: number;
  /** Receives a warning when the artifact cannot be kept. Default `consoleLogger`. */
  logger?: Logger;
}

export interface OutputSummary {
  /**
   * What the model sees: the last `spillBytes` of output (all of it when not truncated), from a
   * UTF-8 character boundary, sanitized by `sanitizeText` (`@stowage/core`) (escape sequences and control
   * characters removed, invalid UTF-8 replaced). The artifact file keeps the raw bytes.
   */
  text: string;
  /** True when the output was longer than `text`. */
  truncated: boolean;
  /** Bytes of the raw output. */
  totalBytes: number;
  /** Lines of the raw output (as the artifact file holds it): newlines, plus one for a last line without a newline. */
  totalLines: number;
  /** The id of the artifact holding the full output (`artifact://<id>`); set only when it was written completely. */
  artifactId?: string;
  /** Why a truncated output has no artifact. */
  artifactError?: StowageError;
}

const encoder = new TextEncoder();
const NEWLINE = 0x0a;
const ACCEPTED: Promise<void> = Promise.resolve();

function asBytes(chunk: unknown): Uint8Array | undefined {
  if (typeof chunk === "string") return encoder.encode(chunk);
  if (chunk instanceof Uint8Array) return chunk;
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

function countNewlines(chunk: Uint8Array): number {
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/**
 * Streaming tool output: keeps a tail window in memory and, once the output passes
 * `spillBytes`, writes all of it (what was buffered, then every later chunk) to an artifact
 * file that is published on `dump()`. Nothing it does throws into the tool: a failure to create
 * or write the artifact is recorded in `artifactError` and the sink goes on with the tail only.
 *
 * Chunks are not copied: like a Node stream, do not change a chunk after pushing it.
 */
export class OutputSink {
  readonly #artifacts: ArtifactWriterSource | undefined;
  readonly #toolType: string;
  readonly #logger: Logger;
  readonly #tail: TailWindow;
  #totalBytes = 0;
  #newlines = 0;
  #lastByte = -1;
  #spill: "waiting" | "spilling" | "off" = "waiting";
  #writer: ArtifactWriter | undefined;
  #queue: Uint8Array[] = [];
  #queuedBytes = 0; // waiting for the next write (the batch being written is not counted)
  #pump: Promise<void> | undefined;
  #spaceWaiters: Array<() => void> = [];
  #artifactError: StowageError | undefined;
  #published = false;
  #finished = false;
  #discarding = false;
  #warnedLatePush = false;
  #closing: Promise<void> | undefined;
  #abandoning: Promise<void> | undefined;

  constructor(sinkOptions: OutputSinkOptions = {}) {
    const options = sinkOptions ?? {};
    const spillBytes = options.spillBytes ?? DEFAULT_SPILL_BYTES;
    if (!Number.isSafeInteger(spillBytes) || spillBytes < 1 || spillBytes > MAX_SPILL_BYTES) {
      throw new StowageError(
        "INVALID_INPUT",
        `spillBytes must be an integer from 1 to ${MAX_SPILL_BYTES}, got ${describeValue(options.spillBytes)}`,
        { details: { limit: MAX_SPILL_BYTES } },
      );
    }
    this.#artifacts = options.artifacts;
    this.#toolType = typeof options.toolType === "string" ? options.toolType : "tool";
    this.#logger = options.logger ?? consoleLogger;
    this.#tail = new TailWindow(spillBytes);
  }

  /** The artifact id once the output spilled and its file is open; the artifact is complete only after `dump()`. */
  get artifactId(): string | undefined {
    return this.#spill === "spilling" || this.#published ? this.#writer?.id : undefined;
  }

  /** Why the full output is not (or no longer) being kept, if it is not. */
  get artifactError(): StowageError | undefined {
    return this.#artifactError;
  }

  get totalBytes(): number {
    return this.#totalBytes;
  }

  /**
   * Adds a chunk (bytes or a string, stored as UTF-8). Resolves at once unless the artifact
   * file is behind by {@link SINK_HIGH_WATER_BYTES}; then it resolves once the disk caught up.
   * Never rejects. Chunks pushed after `dump()` or `dispose()` are ignored with a warning.
   */
  push(chunk: Uint8Array | string): Promise<void> {
    if (this.#finished) {
      if (!this.#warnedLatePush) {
        this.#warnedLatePush = true;
        this.#warn(`output sink for ${this.#toolType}: output pushed after dump() or dispose() was ignored`);
      }
      return ACCEPTED;
    }
    const bytes = asBytes(chunk);
    if (bytes === undefined) {
      this.#warn(`output sink for ${this.#toolType}: ignored a chunk that is not bytes or text`, {
        chunk: describeValue(chunk),
      });
      return ACCEPTED;
    }
    if (bytes.byteLength === 0) return ACCEPTED;
    this.#newlines += countNewlines(bytes);
    this.#lastByte = bytes[bytes.byteLength - 1]!;
    this.#totalBytes += bytes.byteLength;
    if (this.#spill === "waiting" && this.#totalBytes > this.#tail.capacity) this.#startSpill();
    if (this.#spill === "spilling") this.#enqueue(bytes);
    this.#tail.append(bytes);
    if (this.#queuedBytes < SINK_HIGH_WATER_BYTES || this.#spill !== "spilling") return ACCEPTED;
    return new Promise((resolve) => this.#spaceWaiters.push(resolve));
  }

  /**
   * A new `WritableStream` feeding this sink, so that `stdout.pipeTo(sink.writable())` gets
   * backpressure. Closing or aborting it does not finish the sink (stdout and stderr may share
   * one): call `dump()`.
   */
  writable(): WritableStream<Uint8Array | string> {
    return new WritableStream<Uint8Array | string>({ write: (chunk) => this.push(chunk) });
  }

  /**
   * Finishes the output: waits for the artifact file, publishes it (now `artifact://<id>` reads
   * it as complete) and returns the summary. Later calls return the same summary. Never rejects.
   */
  async dump(): Promise<OutputSummary> {
    this.#closing ??= this.#close(true);
    await this.#closing;
    const truncated = this.#totalBytes > this.#tail.capacity;
    const summary: OutputSummary = {
      text: sanitizeText(this.#tail.text()),
      truncated,
      totalBytes: this.#totalBytes,
      totalLines: this.#newlines + (this.#lastByte !== -1 && this.#lastByte !== NEWLINE ? 1 : 0),
    };
    if (this.#published) summary.artifactId = this.#writer!.id;
    else if (truncated && this.#artifactError) summary.artifactError = this.#artifactError;
    return summary;
  }

  /**
   * Releases the artifact file descriptor, whatever happened. Before `dump()`, the unfinished
   * artifact is removed (nothing refers to it); after, this does nothing. Never rejects.
   */
  async dispose(): Promise<void> {
    this.#closing ??= this.#close(false);
    await this.#closing;
  }

  /** `dispose()`, for `await using sink = createOutputSink(…)`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  /** A logger that throws must not turn into a throw from `push()`. */
  #warn(message: string, details?: Record<string, unknown>): void {
    try {
      if (details === undefined) this.#logger.warn(message);
      else this.#logger.warn(details, message);
    } catch {
      // Nothing else can be done with a warning the logger refused.
    }
  }

  #startSpill(): void {
    if (!this.#artifacts) {
      this.#spill = "off";
      this.#artifactError = new StowageError(
        "UNAVAILABLE",
        `output of ${this.#toolType} was truncated and no artifact store was given, so the full output was not kept`,
        { reason: "NO_ARTIFACT_STORE" },
      );
      return;
    }
    this.#spill = "spilling";
    // Until now the output fits the tail window, so the window holds all of it.
    for (const chunk of this.#tail.chunks()) this.#enqueue(chunk);
  }

  #enqueue(chunk: Uint8Array): void {
    // Checked before adding: one huge chunk from a producer that awaits is fine.
    const waiting = this.#queuedBytes;
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.byteLength;
    if (waiting > MAX_SINK_BUFFERED_BYTES) {
      this.#fail(
        new StowageError(
          "TOO_LARGE",
          `output of ${this.#toolType} arrived faster than the disk took it and push() was not awaited; more than ${MAX_SINK_BUFFERED_BYTES} bytes waited`,
          { reason: "BACKPRESSURE_IGNORED", details: { limit: MAX_SINK_BUFFERED_BYTES } },
        ),
      );
      return;
    }
    this.#pump ??= this.#runPump();
  }

  async #runPump(): Promise<void> {
    try {
      if (!this.#writer) {
        this.#writer = await this.#artifacts!.openArtifactWriter(this.#toolType);
        // The artifact was given up (or the sink disposed) while the file was being created.
        if (this.#spill !== "spilling" || this.#discarding) this.#releaseWriter();
      }
      while (this.#queue.length > 0 && this.#spill === "spilling" && !this.#discarding) {
        const batch = this.#queue;
        this.#queue = [];
        this.#queuedBytes = 0;
        this.#wakeProducers();
        await this.#writer.write(batch);
      }
    } catch (err) {
      this.#fail(err);
    } finally {
      this.#pump = undefined;
    }
  }

  /** Closes and removes an unpublished artifact file; the promise is awaited by `#close`. */
  #releaseWriter(): void {
    if (this.#writer && !this.#published) this.#abandoning ??= this.#writer.abandon();
  }

  #wakeProducers(): void {
    if (this.#queuedBytes >= SINK_HIGH_WATER_BYTES && this.#spill === "spilling" && !this.#discarding) return;
    const waiters = this.#spaceWaiters;
    this.#spaceWaiters = [];
    for (const wake of waiters) wake();
  }

  #fail(err: unknown): void {
    if (this.#spill === "off") return;
    this.#spill = "off";
    this.#artifactError = fromSystemError(err, `keep the full output of ${this.#toolType} as an artifact`);
    this.#warn(`${this.#artifactError.message}; only the tail of the output is kept`, {
      code: this.#artifactError.code,
    });
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#releaseWriter();
    this.#wakeProducers();
  }

  async #close(publish: boolean): Promise<void> {
    this.#finished = true;
    if (!publish) this.#discarding = true;
    // The pump may be creating the file or writing: let it settle; it stops once the queue is empty.
    while (this.#pump) await this.#pump;
    this.#wakeProducers();
    if (this.#writer && this.#spill === "spilling") {
      if (publish) {
        try {
          await this.#writer.publish();
          this.#published = true;
        } catch (err) {
          this.#fail(err);
        }
      } else {
        this.#artifactError = new StowageError("ABORTED", "output sink was disposed before dump()", {
          reason: "DISPOSED",
        });
        this.#releaseWriter();
      }
      this.#spill = "off";
    }
    await this.#abandoning;
  }
}

/** A sink for one tool call; pass `artifacts` (an `ArtifactStore`) to keep the full output. */
export function createOutputSink(options: OutputSinkOptions = {}): OutputSink {
  return new OutputSink(options);
}
