/** What `put` accepts: bytes in memory, or a stream that is consumed once. */
export type ObjectBody = Uint8Array | ReadableStream<Uint8Array>;

export interface OperationOptions {
  signal?: AbortSignal;
}

export interface PutOptions extends OperationOptions {
  /** `"*"`: create-only. Fails with ALREADY_EXISTS, writing nothing, when the key exists. */
  ifNoneMatch?: "*";
  /** A MIME type kept with the object where `capabilities.contentType` is true. */
  contentType?: string;
}

export interface PutResult {
  key: string;
  /** Bytes stored. */
  size: number;
  /** True when no object existed at `key` before this put. */
  created: boolean;
}

export interface ObjectInfo {
  size: number;
  lastModified: Date;
  contentType?: string;
}

export interface ListOptions extends OperationOptions {
  /** A raw key prefix, not a directory: `"logs/2026-"` matches `"logs/2026-11.txt"`. */
  prefix?: string;
  /** The `cursor` of the previous page; omit for the first page. */
  cursor?: string;
  /** Items per page, 1 to {@link MAX_LIST_LIMIT}; defaults to {@link DEFAULT_LIST_LIMIT}. */
  limit?: number;
}

export interface ListItem {
  key: string;
  size: number;
  lastModified: Date;
}

export interface ListPage {
  /** Keys in ascending UTF-8 byte order. */
  items: ListItem[];
  /** Pass to the next `list` call; `undefined` when this was the last page. */
  cursor: string | undefined;
}

export interface IterateOptions extends OperationOptions {
  prefix?: string;
  /** Items fetched per underlying `list` call. */
  pageSize?: number;
}

/** What `ObjectStore.keys` returns: the keys one at a time (`for await`), or a page at a time. */
export interface KeyListing extends AsyncIterable<string> {
  /**
   * The same keys in the same order, an array at a time: never an empty one, none longer than
   * `pageSize` (default 1,000); a page is the backend's own batch (a list page; on the file system
   * a directory's files), handed over without a copy. One promise a page where `for await` over
   * the listing takes one a key: for a caller that gathers many keys (10,000 keys of a fresh
   * directory on the file system: about a fifth less time).
   */
  byPage(): AsyncIterable<readonly string[]>;
}

export interface MoveOptions extends OperationOptions {
  /** `"*"`: fail with ALREADY_EXISTS, leaving both keys as they were, when `to` exists. */
  ifNoneMatch?: "*";
}

export interface DirectUploadRequest {
  key: string;
  contentType: string;
  /** Exact size the upload must have; the signature binds it. */
  contentLength: number;
  /** Hex SHA-256 the upload must have, bound where the backend can verify it. */
  sha256?: string;
  expiresInSeconds: number;
}

export interface DirectDownloadRequest {
  key: string;
  expiresInSeconds: number;
  /**
   * How a browser should treat the download: `attachment` saves it, `inline` may show it. Default:
   * the backend's (S3 sends what the object has; the file system shows images, video and text
   * inline and sends anything else as an attachment).
   */
  disposition?: "inline" | "attachment";
  /** The file name the download is saved under; default the key's last segment. A safe path segment. */
  filename?: string;
}

/** A request the client sends as-is: the URL plus exactly these headers. */
export interface SignedRequest {
  method: "PUT" | "GET";
  url: string;
  headers: Record<string, string>;
  expiresAt: Date;
}

export interface ObjectStoreCapabilities {
  /** Create-only puts and moves are atomic: of concurrent writers exactly one wins. */
  atomicCreateOnly: boolean;
  /** `head` returns the `contentType` given to `put`. */
  contentType: boolean;
  /** `move` runs inside the backend, without copying bytes through this process. */
  nativeMove: boolean;
  /**
   * `move` keeps the object's `lastModified` (a rename, a row that keeps its timestamp): a moved
   * object whose timestamp differs from the one read before the move was touched in between.
   * False where a move restamps (S3's copy) or the store does not say.
   */
  moveKeepsLastModified: boolean;
  /** `touch` refreshes `lastModified` without rewriting the bytes. */
  nativeTouch: boolean;
  /** `createUploadUrl` is available. */
  directUpload: boolean;
  /** `createDownloadUrl` is available. */
  directDownload: boolean;
  /**
   * A direct upload whose bytes do not hash to the SHA-256 its URL binds is refused by the
   * backend itself (AWS S3, the fs signer). False where such a body is stored anyway (Ceph RGW 16):
   * the caller must verify the stored object after the upload.
   */
  directUploadVerifiesSha256: boolean;
}

/**
 * A key → bytes store. Keys are relative, `/`-separated and validated by every method before
 * the backend is touched (see `assertSafeKey`). Reads of a missing key return `null`;
 * every other failure throws a StowageError.
 */
export interface ObjectStore {
  /** The backend's name, used in messages (`memory`, `fs`, `s3`, …). */
  readonly name: string;
  readonly capabilities: Readonly<ObjectStoreCapabilities>;
  put(key: string, body: ObjectBody, options?: PutOptions): Promise<PutResult>;
  /**
   * The object's bytes, the caller's own: a new buffer each call, never one the store keeps or
   * hands to another caller, so that a caller may change them (the encrypted store opens an
   * object over the bytes it read, instead of into a second buffer of the same size).
   */
  get(key: string, options?: OperationOptions): Promise<Uint8Array | null>;
  stream(key: string, options?: OperationOptions): Promise<ReadableStream<Uint8Array> | null>;
  head(key: string, options?: OperationOptions): Promise<ObjectInfo | null>;
  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string, options?: OperationOptions): Promise<void>;
  list(options?: ListOptions): Promise<ListPage>;
  /** Every item under `prefix`, page by page, in key order. */
  iterate(options?: IterateOptions): AsyncIterable<ListItem>;
  /**
   * Every key under `prefix`, in key order, without its size or time: what `iterate` yields, for a
   * caller that needs only the names. Where a listing's size and time cost a read per object (the
   * file system stats each file of a directory it has not listed since it changed), much cheaper.
   * `for await` hands the keys out one by one; `byPage()` an array at a time.
   */
  keys(options?: IterateOptions): KeyListing;
  /** Moves an object to a new key. Fails with NOT_FOUND when `from` is missing. */
  move(from: string, to: string, options?: MoveOptions): Promise<PutResult>;
  /** Refreshes `lastModified`; false when the key is missing. */
  touch(key: string, options?: OperationOptions): Promise<boolean>;
  createUploadUrl?(request: DirectUploadRequest, options?: OperationOptions): Promise<SignedRequest>;
  createDownloadUrl?(request: DirectDownloadRequest, options?: OperationOptions): Promise<SignedRequest>;
  /**
   * Where the object at `key` lives, as a URI outside this process can name it (`file:///data/k`,
   * `s3://bucket/prefix/k`); absent on stores without such an address (memory, PostgreSQL).
   */
  uriFor?(key: string): string;
}

/** Items per `list` page when no limit is given. */
export const DEFAULT_LIST_LIMIT = 1000;
/** Largest `limit` a `list` call accepts (the S3 page size). */
export const MAX_LIST_LIMIT = 1000;
/** Longest cursor accepted back from a caller. */
export const MAX_CURSOR_LENGTH = 4096;
