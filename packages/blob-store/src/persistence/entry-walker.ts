import { parseDataUrl } from "@stowage/core";

/**
 * How many objects and arrays deep the walker descends into an entry; anything deeper is kept as
 * it is (not externalized, not cut, refs not resolved). Image locations are a handful of levels
 * deep (`message.content[i].content[j].source.data`); the bound keeps a hostile line from
 * exhausting the stack, which JSON itself does not guard against at this depth.
 */
export const MAX_ENTRY_DEPTH = 512;

/** A base64 payload found in a session entry: an image, or a document (PDF) sent the same way. */
interface ImagePayload {
  /** The base64 text (of a data URL: the part after its comma), or a blob ref where one was stored before. */
  payload: string;
  /** The key of the field holding it (undefined for an element of an array). */
  field: string | undefined;
  /**
   * Keys and indexes from the entry down to the string that holds the payload (a data URL's whole
   * text). Only valid during the call: copy it to keep it.
   */
  path: readonly (string | number)[];
}

/** Where an object sits in an entry: the entry itself, its `message`, a content block, or deeper. */
type ObjectPlace = "entry" | "message" | "block" | "nested";

interface EntryVisitor {
  /**
   * A replacement for an image payload, or undefined to keep it as it is. An image payload is
   * never handed to `string`: the visitor decides what happens to it.
   */
  image?(image: ImagePayload): string | undefined;
  /** A replacement for a string value; `field` is its key (undefined in arrays), `owner` its object. */
  string?(value: string, field: string | undefined, owner: Record<string, unknown> | undefined): string;
  /** True to leave `field` out of an object at `place`. */
  dropField?(field: string, place: ObjectPlace): boolean;
  /** Called when an object was rewritten, to fix fields derived from others. */
  rewrittenObject?(original: Record<string, unknown>, rewritten: Record<string, unknown>): void;
  /** Called for each object or array below {@link MAX_ENTRY_DEPTH}, which is kept as it is. */
  tooDeep?(): void;
}

type JsonObject = Record<string, unknown>;
type FieldRule = "base64" | "data-url" | "data-urls" | "blocks" | ImageRule | ByShape;
/**
 * Which fields hold an image payload, and in which form: `base64`, `data-url`, `data-urls` (an
 * array of data URLs), `blocks` (an array of content blocks), a rule for the object below, or
 * {@link ByShape} where the field's shape says which.
 */
type ImageRule = { [field: string]: FieldRule };

/** A field that is an object (read by `object`) in some records and an array of blocks in others. */
class ByShape {
  constructor(readonly object: ImageRule) {}
}

/**
 * Image payloads outside `content` arrays, where real agents put them. Field names are matched
 * from the entry down.
 */
const DECLARED_LOCATIONS: ImageRule = {
  // Claude Code: the Read tool's own copy of an image (or PDF) it read, beside the tool_result;
  // for an MCP tool, the tool's content blocks themselves (an array, images included).
  toolUseResult: new ByShape({ file: { base64: "base64" } }),
  // The Claude Agent SDK's name for the same field.
  tool_use_result: new ByShape({ file: { base64: "base64" } }),
  // Codex rollouts: images a user attached (`event_msg` `user_message.images`, data URLs), and
  // tool outputs given as content items (`function_call_output.output`).
  payload: { images: "data-urls", output: "blocks" },
};

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Block shapes that carry base64: pi images (`data`), Anthropic images and documents
 * (`source.data`, PDFs included), OpenAI chat and responses images and files (data URLs).
 */
function imageRuleFor(block: JsonObject): ImageRule | undefined {
  switch (block.type) {
    case "image":
      if (typeof block.data === "string") return { data: "base64" };
      if (isObject(block.source) && block.source.type === "base64") return { source: { data: "base64" } };
      if (typeof block.image_url === "string") return { image_url: "data-url" };
      return undefined;
    case "document":
      return isObject(block.source) && block.source.type === "base64"
        ? { source: { data: "base64" } }
        : undefined;
    case "image_url":
      return typeof block.image_url === "string"
        ? { image_url: "data-url" }
        : { image_url: { url: "data-url" } };
    case "input_image":
      return { image_url: "data-url" };
    case "input_file":
      return { file_data: "data-url" };
    default:
      return undefined;
  }
}

/**
 * Rewrites a JSON entry through `visitor`, copying only the objects and arrays on the path to a
 * change; untouched subtrees are shared with the input, which is never mutated. Image payloads are
 * found in `content` arrays of blocks, at the {@link DECLARED_LOCATIONS}, and, for `data:image/…`
 * URLs, in any string that is one.
 */
export function rewriteEntry<T>(entry: T, visitor: EntryVisitor): T {
  /** Objects and arrays entered on the way to the current value. */
  let depth = 0;
  /** Keys and indexes from the entry to the current value. */
  const path: (string | number)[] = [];
  /** `walk(container)`, or `container` untouched (reported) when it lies below {@link MAX_ENTRY_DEPTH}. */
  function within<C>(container: C, walk: (container: C) => C): C {
    if (depth >= MAX_ENTRY_DEPTH) {
      visitor.tooDeep?.();
      return container;
    }
    depth++;
    try {
      return walk(container);
    } finally {
      depth--;
    }
  }

  /** The string itself when it is an image data URL; otherwise the visitor's ordinary string. */
  function visitString(value: string, field: string | undefined, owner: JsonObject | undefined): string {
    if (visitor.image) {
      const replaced = visitDataUrl(value, field, true);
      if (replaced !== undefined) return replaced;
    }
    return visitor.string ? visitor.string(value, field, owner) : value;
  }

  /**
   * The rewritten data URL (its header kept as written), the URL unchanged when the visitor keeps
   * it, or undefined when it is not a base64 data URL (of an image, with `imagesOnly`).
   */
  function visitDataUrl(value: string, field: string | undefined, imagesOnly: boolean): string | undefined {
    const url = parseDataUrl(value);
    if (!url?.base64 || (imagesOnly && !url.mediaType?.startsWith("image/"))) return undefined;
    const replaced = visitor.image?.({ payload: url.payload, field, path });
    return replaced === undefined ? value : url.header + replaced;
  }

  function visitImageField(
    value: unknown,
    form: "base64" | "data-url",
    field: string | undefined,
    owner: JsonObject | undefined,
  ): unknown {
    if (typeof value !== "string") return visit(value, field, owner, "nested");
    if (form === "data-url") return visitDataUrl(value, field, false) ?? visitString(value, field, owner);
    return visitor.image?.({ payload: value, field, path }) ?? value;
  }

  function visitArray(array: unknown[], element: (child: unknown) => unknown): unknown[] {
    return within(array, () => visitElements(array, element));
  }

  function visitElements(array: unknown[], element: (child: unknown) => unknown): unknown[] {
    let copy: unknown[] | undefined;
    for (let i = 0; i < array.length; i++) {
      const child = array[i];
      path.push(i);
      const next = element(child);
      path.pop();
      if (next !== child) {
        copy ??= array.slice();
        copy[i] = next;
      }
    }
    return copy ?? array;
  }

  const visitBlock = (child: unknown): unknown =>
    isObject(child)
      ? visitObject(child, "block", imageRuleFor(child))
      : visit(child, undefined, undefined, "nested");

  function visitRuled(child: unknown, rule: FieldRule, field: string, owner: JsonObject): unknown {
    if (rule instanceof ByShape) {
      if (Array.isArray(child)) return visitArray(child, visitBlock);
      return isObject(child)
        ? visitObject(child, "nested", rule.object)
        : visit(child, field, owner, "nested");
    }
    switch (rule) {
      case "base64":
      case "data-url":
        return visitImageField(child, rule, field, owner);
      case "data-urls":
        return Array.isArray(child)
          ? visitArray(child, (url) => visitImageField(url, "data-url", undefined, undefined))
          : visit(child, field, owner, "nested");
      case "blocks":
        return Array.isArray(child) ? visitArray(child, visitBlock) : visit(child, field, owner, "nested");
      default:
        return isObject(child) ? visitObject(child, "nested", rule) : visit(child, field, owner, "nested");
    }
  }

  function visitObject(object: JsonObject, place: ObjectPlace, rule: ImageRule | undefined): JsonObject {
    return within(object, () => visitFields(object, place, rule));
  }

  function visitFields(object: JsonObject, place: ObjectPlace, rule: ImageRule | undefined): JsonObject {
    let copy: JsonObject | undefined;
    for (const field of Object.keys(object)) {
      if (visitor.dropField?.(field, place)) {
        copy ??= { ...object };
        delete copy[field];
        continue;
      }
      const child = object[field];
      // Own fields only: `constructor` or `__proto__` in an entry must not find Object's members.
      const fieldRule = rule && Object.hasOwn(rule, field) ? rule[field] : undefined;
      path.push(field);
      const next =
        fieldRule !== undefined
          ? visitRuled(child, fieldRule, field, object)
          : visit(child, field, object, place === "entry" && field === "message" ? "message" : "nested");
      path.pop();
      if (next !== child) {
        copy ??= { ...object };
        copy[field] = next;
      }
    }
    if (copy) visitor.rewrittenObject?.(object, copy);
    return copy ?? object;
  }

  function visit(
    value: unknown,
    field: string | undefined,
    owner: JsonObject | undefined,
    place: ObjectPlace,
  ): unknown {
    if (typeof value === "string") return visitString(value, field, owner);
    if (Array.isArray(value)) {
      // The generic rule: an array under `content` holds content blocks.
      return field === "content"
        ? visitArray(value, visitBlock)
        : visitArray(value, (child) => visit(child, undefined, undefined, "nested"));
    }
    if (isObject(value)) return visitObject(value, place, place === "entry" ? DECLARED_LOCATIONS : undefined);
    return value;
  }

  return visit(entry, undefined, undefined, "entry") as T;
}
